"""`dagmca eval`: arms (protocols, a single agent, compute-matched votes, the full
session and setting variants) run over tasks with known answers or judged in pairs,
with the statistics that say which differences are real.

The package's namespace is the light part (tasks, arms, the report); running an eval,
which loads the whole pipeline, is `dagmca.evaluation.running`, imported by whoever
runs one, so that the CLI's other commands do not pay for it."""

from dagmca.evaluation.arms import KINDS, Arm, parse_arms
from dagmca.evaluation.report import EvalReport
from dagmca.evaluation.tasks import Task, load_tasks

__all__ = ["KINDS", "Arm", "EvalReport", "Task", "load_tasks", "parse_arms"]
