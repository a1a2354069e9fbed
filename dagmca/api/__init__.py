"""dagmca's Python API: `Workspace` (async, a store opened once for many sessions, a
corpus build, an evaluation) and `run` (one session, synchronously) with the
synchronous `build`, `evaluate` and `swarm`. The CLI is a client of it.

`__all__` is what a library caller uses: those and the results they return. What only
the CLI uses (`dagmca.workspace.BaseWorkspace` and `settings_from`,
`dagmca.api.sync.in_workspace`) is imported from its own module."""

from dagmca.api.building import BuildResult, BuildWatcher
from dagmca.api.swarming import swarm
from dagmca.api.sync import build, evaluate, run
from dagmca.api.workspace import Workspace
from dagmca.evaluation import EvalReport
from dagmca.evaluation.options import EvalOptions
from dagmca.swarm.options import SwarmOptions
from dagmca.swarm.report import SwarmReport
from dagmca.workspace import ClientLike, LedgerReport, RevisitResult, RunResult, SettingsLike, Spend

__all__ = [
    "BuildResult",
    "BuildWatcher",
    "ClientLike",
    "EvalOptions",
    "EvalReport",
    "LedgerReport",
    "RevisitResult",
    "RunResult",
    "SettingsLike",
    "Spend",
    "SwarmOptions",
    "SwarmReport",
    "Workspace",
    "build",
    "evaluate",
    "run",
    "swarm",
]
