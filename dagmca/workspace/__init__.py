"""Sessions in one store, as a library: `BaseWorkspace` runs, resumes, revisits and
traces sessions and reads them back. `dagmca.api.Workspace` builds on it."""

from dagmca.workspace.backends import ClientLike, Handed
from dagmca.workspace.core import BaseWorkspace
from dagmca.workspace.inputs import SettingsLike, settings_from
from dagmca.workspace.results import LedgerReport, RevisitResult, RoleShare, RunResult, Spend

__all__ = [
    "BaseWorkspace",
    "ClientLike",
    "Handed",
    "LedgerReport",
    "RevisitResult",
    "RoleShare",
    "RunResult",
    "SettingsLike",
    "Spend",
    "settings_from",
]
