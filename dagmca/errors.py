"""The errors dagmca raises for what a user can cause or fix.

They form one hierarchy under `DagmcaError` and carry no exit codes: a library caller
catches them like any exception, and the CLI (`dagmca.cli.app`) maps each kind to its
exit code and prints it as one line, never a traceback.
"""

from collections.abc import Sequence


class DagmcaError(Exception):
    """Anything dagmca refuses or cannot do for a reason the user can act on. `problem`
    says what is wrong; `fix`, when known, what to do about it."""

    def __init__(self, problem: str, fix: str = "") -> None:
        super().__init__(problem)
        self.problem = problem
        self.fix = fix

    def line(self) -> str:
        return f"{self.problem} — {self.fix}" if self.fix else self.problem


class UserError(DagmcaError):
    """Bad input: a missing or unreadable passage, a bad option, an unknown session."""


class SettingsError(UserError):
    """A settings file, profile, environment variable or flag that cannot be used: an
    unknown key, a value of the wrong type, invalid TOML, an unknown profile. `setting`:
    the setting a value was refused for, when the problem is one setting's value (the
    CLI then names it by its flag)."""

    def __init__(self, problem: str, fix: str = "", *, setting: str | None = None) -> None:
        super().__init__(problem, fix)
        self.setting = setting


class SessionNotFound(UserError):
    """No session of that id in the store."""


class SessionDone(UserError):
    """A session asked to go on that has already finished: nothing is left to do (the
    command line says so and exits 0, as a rerun of a finished build or eval does)."""

    def __init__(self, session: str) -> None:
        super().__init__(f"session {session} is already done; nothing to resume")
        self.session = session


class SessionBusy(UserError):
    """Another live process holds the session's lease: it is being written now."""

    def __init__(self, session: str, holder: str) -> None:
        super().__init__(
            f"session {session} is being written by another process ({holder})",
            "wait for it to end, or stop that process",
        )
        self.session = session
        self.holder = holder


class EndpointError(DagmcaError):
    """The LLM endpoint or graph database cannot be used (unreachable, bad auth)."""


class StoreError(DagmcaError):
    """A write or read the graph store refused (a missing endpoint, a broken constraint,
    an index the store does not keep); nothing of a refused write was kept."""


class SessionLinked(StoreError):
    """A session other sessions' relationships point into (a later passage's answer to
    one of its stubs, an evaluation that ran it): deleting it would cut them."""

    def __init__(self, session: str, linked: Sequence[str]) -> None:
        super().__init__(
            f"session {session} is linked from {', '.join(linked)}",
            "delete those first, or force the deletion to cut the links",
        )
        self.session = session
        self.linked = list(linked)


class BuildInterrupted(DagmcaError):
    """The user stopped a build (Ctrl-C): every finished turn is kept, and the same
    command resumes it."""


class Interrupted(DagmcaError):
    """The user stopped a run (Ctrl-C); every finished turn is in the store."""

    def __init__(self, session: str, location: str) -> None:
        super().__init__(f"session {session} interrupted")
        self.session = session
        self.location = location
