"""What runs inside the executor's sandboxes. dagmca never imports it: the executor
passes this file's source to `python -I -S -B -X utf8 -c`, then a marker, the role and
a JSON document of the role's settings (descriptor numbers and limits, nothing secret).

Two roles, a process each, each in a sandbox of its own:

- `answer` loads the answer's code (read from a descriptor) and serves calls: each
  call's arguments come from the tests' process as data, and what the call returned
  (or raised, and what it printed) goes back as data. It never holds the tests.
- `judge` runs the task's tests with `candidate` (and the entry point's name) bound to
  a proxy that sends each call to the answer's process and reads the reply back as
  plain values, compared here, and writes the verdict on a descriptor that only the
  executor holds. Whatever the answer does to its own interpreter (a trace hook, a
  replaced builtin, an object equal to everything) stays in its own process.

Both first join the run's control groups (a descriptor of each group's process list,
opened by the executor) and set their resource limits, before any of the task's code.

On the wire, one JSON document a line; tuples, sets and dicts (keys of any data type)
tagged, so that what comes back compares as what was returned. Only the exact built-in
types pass: an instance of a subclass is not data.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import resource
import sys

TYPE_CHECKING = False  # typing is not imported at run time: each import delays the run
if TYPE_CHECKING:
    from typing import Any, BinaryIO

EXIT_OUTPUT = 86  # the answer printed more than its output limit
EXIT_LOCKIN = 97  # the process could not lock itself in: nothing of the task ran
_DEPTH = 100
_ENDS_ITERATION = (StopIteration, StopAsyncIteration)


class NotData(ValueError):
    """A value that is not plain data (numbers, strings, lists, tuples, dicts, sets,
    booleans, None)."""


def encode(value: object, depth: int = 0) -> object:
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    if depth > _DEPTH:
        raise NotData(f"nested deeper than {_DEPTH} levels")
    if kind is list:
        return [encode(v, depth + 1) for v in value]  # type: ignore[attr-defined]
    if kind in (tuple, set, frozenset):
        return {kind.__name__: [encode(v, depth + 1) for v in value]}  # type: ignore[attr-defined]
    if kind is dict:
        return {"dict": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}  # type: ignore[attr-defined]
    raise NotData(f"a {kind.__name__}")


def decode(value: object) -> Any:
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        ((tag, items),) = value.items()
        if not isinstance(items, list):
            raise NotData(f"a malformed {tag}")
        if tag == "tuple":
            return tuple(decode(v) for v in items)
        if tag == "set":
            return {decode(v) for v in items}
        if tag == "frozenset":
            return frozenset(decode(v) for v in items)
        if tag == "dict":
            return {decode(k): decode(v) for k, v in items}
        raise NotData(f"an unknown tag {tag!r}")
    return value


def _dump(message: dict[str, object]) -> bytes:
    return (json.dumps(message, allow_nan=True) + "\n").encode()


def _send(fd: int, message: dict[str, object]) -> None:
    _send_bytes(fd, _dump(message))


def _send_bytes(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _lock_in(settings: dict[str, Any]) -> None:
    """Join the run's control groups, then set the limits (soft and hard), so that
    everything the task's code starts is counted and bound."""
    for fd in settings["groups"]:
        os.write(fd, b"0")  # 0: the writing process itself
        os.close(fd)
    for name, (soft, hard) in settings["rlimits"].items():
        resource.setrlimit(getattr(resource, name), (soft, hard))


class Capture(io.TextIOBase):
    """What the answer prints, kept for the reply to the call that printed it; past
    `limit` characters in all, the process ends at once (the executor names the limit)."""

    def __init__(self, limit: int) -> None:
        self.parts: list[str] = []
        self.left = limit

    def write(self, text: str) -> int:
        self.left -= len(text)
        if self.left < 0:
            os._exit(EXIT_OUTPUT)
        self.parts.append(text)
        return len(text)

    def take(self) -> str:
        text, self.parts = "".join(self.parts), []
        return text


def _described(exc: BaseException) -> list[object]:
    line = exc.lineno if isinstance(exc, SyntaxError) else _line_in(exc, "answer.py")
    return [type(exc).__name__, str(exc)[:2000], line]


def _line_in(exc: BaseException, filename: str) -> int | None:
    """The last line of `filename` that the exception passed through."""
    found, tb = None, exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            found = tb.tb_lineno
        tb = tb.tb_next
    return found


def serve(settings: dict[str, Any]) -> int:
    """The answer's process: load the code, then answer calls until the tests' process
    closes its end."""
    with open(settings["code"], "rb", closefd=True) as f:
        source = f.read().decode("utf-8", "replace")
    calls = open(settings["calls"], "rb", closefd=True)  # noqa: SIM115 (open for the process's life)
    replies: int = settings["replies"]
    capture = Capture(settings["output_chars"])
    sys.stdout = capture
    entry: str | None = settings["entry_point"]
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": builtins}
    try:
        exec(compile(source, "answer.py", "exec"), namespace)
        if entry is not None and not callable(namespace.get(entry)):
            raise NameError(f"the answer defines no function {entry}")
    except BaseException as exc:  # SystemExit too: an answer that exits as it loads fails
        _send(replies, {"failed": _described(exc), "out": capture.take()})
        return 1
    _send(replies, {"ready": True, "out": capture.take()})
    for line in iter(calls.readline, b""):
        request = json.loads(line)
        try:
            result = namespace[request["name"]](*decode(request["args"]), **decode(request["kwargs"]))
        except BaseException as exc:  # reported to the tests, which may expect it
            reply: dict[str, object] = {"raised": _described(exc)}
        else:
            try:
                reply = {"value": encode(result)}
                _dump(reply)  # an integer too long to write, say
            except (NotData, ValueError, RecursionError) as exc:
                reply = {"not_data": str(exc) or type(result).__name__}
        reply["out"] = capture.take()
        _send(replies, reply)
    return 0


class Raised:
    """Marks an exception the answer raised, rebuilt in the tests' process as its
    built-in type, so that a test expecting a ValueError still catches one."""

    call = ""


class AnswerRaised(Exception, Raised):
    """An exception of the answer's that has no built-in type to be rebuilt as."""


class AnswerGone(BaseException):
    """The answer's process ended, or sent what is not a reply: no test after it
    counts (a BaseException, so that a test's `except Exception` does not swallow it)."""


def _rebuilt(raised: object, call: str) -> BaseException:
    name, message = str(raised[0]), str(raised[1])  # type: ignore[index]
    kind = getattr(builtins, name, None)
    exc: BaseException = AnswerRaised(f"{name}: {message}")
    # StopIteration ends the iteration of whatever called the proxy (`all(map(f, xs))`
    # is then True with f never answering), so it is not rebuilt as itself
    if isinstance(kind, type) and issubclass(kind, Exception) and not issubclass(kind, _ENDS_ITERATION):
        try:  # noqa: SIM105 (contextlib is one more import in every sandboxed process)
            exc = type(name, (kind, Raised), {})(message)
        except TypeError:  # a type that needs more than a message (UnicodeDecodeError)
            pass
    exc.call = call  # type: ignore[attr-defined]
    return exc


class Candidate:
    """The answer, as the tests see it: each call goes to the answer's process as
    data, and its reply comes back as data. Once the answer's process has gone or
    broken its side of the wire, every later call fails too."""

    def __init__(self, name: str, calls: int, replies: BinaryIO, limit: int) -> None:
        self.name, self.calls, self.replies, self.limit = name, calls, replies, limit
        self.broken: str | None = None
        self.ended = False  # the answer's process ended (else it broke its side of the wire)

    def _break(self, reason: str, ended: bool = False) -> AnswerGone:
        if self.broken is None:
            self.broken, self.ended = reason, ended
        return AnswerGone(self.broken)

    def receive(self, during: str) -> dict[str, Any]:
        line = self.replies.readline(self.limit + 1)
        if not line:
            raise self._break(f"the answer's process ended {during}", ended=True)
        if len(line) > self.limit:
            raise self._break(f"the answer's reply {during} is larger than {self.limit} bytes")
        try:
            reply = json.loads(line)
            out = reply.pop("out", "")
            if not isinstance(reply, dict) or not isinstance(out, str):
                raise TypeError("not a reply")
        except (ValueError, TypeError, RecursionError, AttributeError):
            raise self._break(f"the answer's process sent what is not a reply {during}") from None
        sys.stdout.write(out)
        return reply

    def __call__(self, *args: object, **kwargs: object) -> Any:
        shown = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
        call = f"{self.name}({shown[:200]})"
        if self.broken is not None:
            raise AnswerGone(self.broken)
        try:
            request = _dump({"name": self.name, "args": encode(list(args)), "kwargs": encode(dict(kwargs))})
        except (NotData, ValueError, RecursionError) as exc:
            raise TypeError(f"the tests pass {call} something that is not data: {exc}") from None
        try:
            _send_bytes(self.calls, request)
        except OSError:
            raise self._break(f"the answer's process ended before {call}", ended=True) from None
        reply = self.receive(f"during {call}")
        try:
            if "value" in reply:
                return decode(reply["value"])
            raised = _rebuilt(reply["raised"], call) if "raised" in reply else None
            not_data = str(reply["not_data"])[:200] if "not_data" in reply else None
        except (NotData, ValueError, TypeError, RecursionError, IndexError, KeyError):
            raised = not_data = None
        if raised is not None:
            raise raised
        if not_data is not None:
            raise self._break(
                f"the answer returned {not_data} from {call}, which is not data "
                "(numbers, strings, lists, tuples, dicts, sets, booleans, None)"
            )
        raise self._break(f"the answer's process sent what is not a reply during {call}")


def _raised(name: str, message: str, memory_mb: int) -> str:
    """An exception of the answer's, named in the task's terms."""
    if name == "MemoryError":
        return f"ran out of its {memory_mb} MB of memory (MemoryError)"
    said = f"raised {name}: {message[:300]}" if message else f"raised {name}"
    if name in ("PermissionError", "OSError") and "[Errno 1]" in message:
        said += " (a call the sandbox refuses)"
    return said


def _failure(exc: BaseException, source: str, memory_mb: int) -> str:
    """Why the tests did not pass, in the terms of the task."""
    line = _line_in(exc, "tests.py")
    lines = source.splitlines()
    at = f" at line {line}: {lines[line - 1].strip()[:200]}" if line and line <= len(lines) else ""
    if isinstance(exc, Raised):
        name, _, message = str(exc).partition(": ") if isinstance(exc, AnswerRaised) else (
            type(exc).__name__, "", str(exc))  # fmt: skip
        return f"the answer {_raised(name, message, memory_mb)} in {exc.call}"
    if isinstance(exc, AssertionError):
        return f"a test failed{at}" + (f" ({str(exc)[:300]})" if str(exc) else "")
    return f"the tests raised {type(exc).__name__}: {str(exc)[:300]}{at}"


def _loaded(first: dict[str, Any], memory_mb: int) -> str | None:
    """Why the answer's code did not load (None when it did)."""
    if "ready" in first:
        return None
    name, message, line = (str(part) for part in first.get("failed", ["?", "?", None]))
    if name == "SystemExit":
        return "the answer exited as it loaded, before any test ran"
    where = f" (line {line})" if line != "None" else ""
    return f"the answer's code {_raised(name, message, memory_mb)}{where}"


def judge(settings: dict[str, Any]) -> int:
    """The tests' process: run the tests against the proxy, then write the verdict."""
    with open(settings["tests"], "rb", closefd=True) as f:
        source = f.read().decode("utf-8", "replace")
    entry: str | None = settings["entry_point"]
    memory_mb: int = settings["memory_mb"]
    replies = open(settings["replies"], "rb", closefd=True)  # noqa: SIM115 (open for the process's life)
    proxy = Candidate(entry or "candidate", settings["calls"], replies, settings["reply_bytes"])
    verdict: dict[str, object] = {"passed": False, "reason": "no verdict"}
    try:
        failed = _loaded(proxy.receive("before it was ready"), memory_mb)
        if failed is not None:
            verdict = {"passed": False, "reason": failed}
        else:
            namespace = {"__name__": "__main__", "__builtins__": builtins, "candidate": proxy}
            if entry is not None:
                namespace[entry] = proxy
            exec(compile(source, "tests.py", "exec"), namespace)
            verdict = {"passed": proxy.broken is None, "reason": proxy.broken or "passed"}
    except AnswerGone:
        pass  # the proxy keeps why
    except BaseException as exc:  # the tests' own failure, whatever its kind
        verdict = {"passed": False, "reason": _failure(exc, source, memory_mb)}
    if proxy.broken is not None:  # even where the tests caught it
        verdict = {"passed": False, "reason": proxy.broken, "gone": proxy.ended}
    sys.stdout.flush()
    _send(settings["verdict"], verdict)
    return 0


def main() -> int:
    settings = json.loads(sys.argv[3])
    try:
        _lock_in(settings)
    except Exception as exc:  # the task's code never runs unbound
        print(f"sandbox lock-in failed: {exc}", file=sys.stderr)
        return EXIT_LOCKIN
    return serve(settings) if sys.argv[2] == "answer" else judge(settings)


if __name__ == "__main__":
    sys.exit(main())
