"""Sessions in one store, as a library: `BaseWorkspace` runs, resumes, revisits and
traces sessions and reads them back, each opened by `BaseWorkspace.open_session`, the
one lifecycle of a session; `control_ledger` traces one session's final against
another's sources (the ledger's control). `dagmca.api.Workspace` builds on it."""

from dagmca.workspace.backends import ClientLike, Handed
from dagmca.workspace.control import control_ledger
from dagmca.workspace.core import BaseWorkspace
from dagmca.workspace.inputs import SettingsLike, settings_from
from dagmca.workspace.results import LedgerReport, RevisitResult, RoleShare, RunResult, Spend
from dagmca.workspace.session import OpenSession, SessionMode, SharedResources

__all__ = [
    "BaseWorkspace",
    "ClientLike",
    "Handed",
    "LedgerReport",
    "OpenSession",
    "RevisitResult",
    "RoleShare",
    "RunResult",
    "SessionMode",
    "SettingsLike",
    "SharedResources",
    "Spend",
    "control_ledger",
    "settings_from",
]
