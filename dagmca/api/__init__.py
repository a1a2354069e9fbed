"""dagmca's Python API: `Workspace` (async, a store opened once for many sessions, a
corpus build, an evaluation) and `run` (one session, synchronously) with the
synchronous `build`, `evaluate` and `swarm`. The CLI is a client of it."""

from dagmca.api.building import (
    BuildResult,
    BuildTotals,
    BuildWatcher,
    CrossLink,
    PassageOutcome,
    SkippedSource,
)
from dagmca.api.swarming import swarm
from dagmca.api.sync import build, evaluate, in_workspace, run
from dagmca.api.workspace import Workspace
from dagmca.evaluation import EvalReport
from dagmca.swarm.report import SwarmReport
from dagmca.workspace import (
    BaseWorkspace,
    ClientLike,
    LedgerReport,
    RevisitResult,
    RoleShare,
    RunResult,
    SettingsLike,
    Spend,
    settings_from,
)

__all__ = [
    "BaseWorkspace",
    "BuildResult",
    "BuildTotals",
    "BuildWatcher",
    "ClientLike",
    "CrossLink",
    "EvalReport",
    "LedgerReport",
    "PassageOutcome",
    "RevisitResult",
    "RoleShare",
    "RunResult",
    "SettingsLike",
    "SkippedSource",
    "Spend",
    "SwarmReport",
    "Workspace",
    "build",
    "evaluate",
    "in_workspace",
    "run",
    "settings_from",
    "swarm",
]
