"""What one run may use, how it ended, and which walls held it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from dagmca.errors import EndpointError
from dagmca.graph.schema import Strict

# where no control group can be made, the run's memory is bounded by a process limit
# times an address-space limit: this many processes or threads, each with its share
FALLBACK_TASKS = 4


class Isolation(StrEnum):
    """How model-written code is held here."""

    BUBBLEWRAP = "bubblewrap"  # every wall: namespaces, a read-only root, seccomp, limits
    NONE = "none"  # bubblewrap cannot start: code runs only when asked to, behind its limits alone


class ExecutorUnavailable(EndpointError):
    """The executor cannot lock itself in on this machine: code tasks cannot be checked
    (exit code 3, as an endpoint that cannot be used)."""


class Limits(Strict):
    """What one run may use. The defaults fit a small function and its tests."""

    cpu_seconds: int = 5  # each process's
    wall_seconds: float = 10.0  # the run's, from start to verdict
    memory_mb: int = 512  # the run's as a whole, every process of it together
    file_mb: int = 1  # a file written, and what the answer prints
    processes: int = 16  # the run's as a whole, threads included
    work_mb: int = 64  # the work folder, a tmpfs of its own
    output_chars: int = 4000  # of the output kept for the report

    def rlimits(self, grouped: bool) -> dict[str, tuple[int, int]]:
        """Each sandboxed process's resource limits (soft, hard). With a control group
        the group bounds the run; without one, the process limit times the address
        space stays within the run's memory."""
        mb = 1024 * 1024
        tasks = self.processes if grouped else min(self.processes, FALLBACK_TASKS)
        space = self.memory_mb if grouped else self.memory_mb // tasks
        return {
            # soft first: SIGXCPU, which names the limit; the hard one a second later
            "RLIMIT_CPU": (self.cpu_seconds, self.cpu_seconds + 1),
            "RLIMIT_AS": (space * mb, space * mb),
            "RLIMIT_FSIZE": (self.file_mb * mb, self.file_mb * mb),
            "RLIMIT_NPROC": (tasks, tasks),
            "RLIMIT_CORE": (0, 0),
        }


@dataclass(frozen=True)
class Outcome:
    """How a run ended: `passed` when the tests' process, which the answer cannot
    reach, ran every test to its end and said so; else `reason`, in the task's terms
    (a test that failed, the answer's exception, the limit it hit)."""

    passed: bool
    reason: str
    output: str
    seconds: float
    isolation: Isolation
