"""dagmca's Python API: `Workspace` (async, a store opened once for many sessions) and
`run` (one session, synchronously). The CLI is a client of it."""

from dagmca.api.backends import ClientLike
from dagmca.api.results import RevisitResult, RoleShare, RunResult, Spend
from dagmca.api.sync import in_workspace, run
from dagmca.api.workspace import SettingsLike, Workspace, settings_from

__all__ = [
    "ClientLike",
    "RevisitResult",
    "RoleShare",
    "RunResult",
    "SettingsLike",
    "Spend",
    "Workspace",
    "in_workspace",
    "run",
    "settings_from",
]
