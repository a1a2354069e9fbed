"""Errors a user can cause. The CLI prints them as one line and exits non-zero."""


class UserError(Exception):
    """A problem the user can fix: bad input, bad option, unknown session, ..."""

    exit_code = 2

    def __init__(self, problem: str, fix: str = "") -> None:
        super().__init__(problem)
        self.problem = problem
        self.fix = fix

    def line(self) -> str:
        return f"{self.problem} — {self.fix}" if self.fix else self.problem


class EndpointError(UserError):
    """The LLM endpoint or graph database cannot be used (unreachable, bad auth)."""

    exit_code = 3


class BuildInterrupted(UserError):
    """The user stopped a build (Ctrl-C): every finished turn is kept, and the same
    command resumes it."""

    exit_code = 130


class Interrupted(Exception):
    """The user stopped a run (Ctrl-C); every finished turn is in the store."""

    def __init__(self, session: str, location: str) -> None:
        super().__init__(f"session {session} interrupted")
        self.session = session
        self.location = location
