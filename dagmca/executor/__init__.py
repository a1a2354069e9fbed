"""The executor: model-written code is run here, so this is a security boundary.

Each run is two processes, each behind bubblewrap's walls (`walls.py`) and a seccomp
filter (`syscalls.py`): the answer's code in one, the task's tests in the other, which
call the answer through a proxy that passes only data and compute the verdict where the
answer cannot reach it (`inside.py`). Memory and processes are bounded for the run as a
whole by a control group (`cgroup.py`) where one can be made; `supervisor.py` starts, watches
and ends a run and says how it went in the task's terms.
"""

from dagmca.executor.limits import ExecutorUnavailable, Isolation, Limits, Outcome
from dagmca.executor.supervisor import check, isolation, preflight, run

__all__ = ["ExecutorUnavailable", "Isolation", "Limits", "Outcome", "check", "isolation", "preflight", "run"]
