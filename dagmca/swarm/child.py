"""The executor's child: run as a script (`python -I -B child.py CONFIG`), never
imported. It is the first code the sandboxed interpreter runs, while it still holds
the privileges it needs to lock itself in, and in this order:

1. inside its own mount namespace (when the parent could make one), it makes every
   mount read-only and mounts a fresh, size-limited tmpfs as its work folder: the
   kernel, not the audit hook, keeps it from writing anywhere else, whatever uid it
   has (as a user, `unshare -r` maps it to root inside, which owns the user's files).
   An interpreter under a private home is bound into reach first, so the child can
   still import the standard library after it drops to `nobody`;
2. it imports the standard modules a small solution uses (sockets meet the walls);
3. it sets the resource limits, soft and hard alike, so the code cannot raise them;
4. when it runs as root, it becomes an unprivileged user (the process limit does not
   bind root);
5. it installs an audit hook that refuses sockets, opening for writing anything
   outside its folder (paths resolved from the real working folder, which it may not
   leave), changing anything outside it (both paths of a rename or link, truncate,
   utime, chown, ...), paths relative to a dir_fd, opening a folder outside, starting
   another program, ctypes and the collector's walks: the only wall against writes
   where the kernel gave no namespace, a speed bump rather than a wall (the tests
   turn it off to try the kernel's alone);
6. it runs the program (`main.py` in its folder) as `__main__`, then writes the run's
   nonce last: a program that exits early, before its tests ran, never writes it.

Exit codes: the program's own; 97 when the lock-in itself failed (the parent then
reports a failure, never runs the code unguarded).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import sys
from typing import Any

LOCKIN_FAILED = 97
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_REMOUNT, _MS_BIND = 1, 2, 4, 32, 4096
_MS_REC, _MS_PRIVATE = 16384, 1 << 18
# statvfs's flag -> mount's: a remount must repeat the flags a user namespace locked
_KEPT = ((2, 2), (4, 4), (8, 8), (1024, 1024), (2048, 2048), (4096, 1 << 21))
_LIBC = ctypes.CDLL(None, use_errno=True)
_PRELOAD = (
    "math", "cmath", "re", "itertools", "functools", "collections", "collections.abc", "heapq", "bisect",
    "string", "json", "operator", "fractions", "decimal", "statistics", "random", "typing", "dataclasses",
    "copy", "textwrap", "unicodedata", "datetime", "enum", "array", "struct", "numbers", "traceback",
    "socket", "encodings.idna",  # so that a test of the network meets the walls, not an import error
)  # fmt: skip


def _mount(source: bytes | None, target: str, fstype: bytes | None, flags: int, data: bytes | None) -> None:
    if _LIBC.mount(source, target.encode(), fstype, flags, data) != 0:
        raise OSError(ctypes.get_errno(), f"mounting {target}")


def _reach(path: str, owner: str) -> None:
    """Keep `path` (the interpreter's prefix) readable to a child that drops to
    `nobody` when an ancestor is private (an interpreter under a 0700 home): that
    ancestor is covered by an empty tmpfs holding only the way to `path`, bound in."""
    parts = os.path.realpath(path).split(os.sep)[1:]
    for depth in range(1, len(parts)):
        ancestor = os.sep + os.sep.join(parts[:depth])
        if os.stat(ancestor).st_mode & 0o001 == 0:
            break
    else:
        return
    fd = os.open(path, os.O_PATH | os.O_DIRECTORY)
    try:
        _mount(b"tmpfs", ancestor, b"tmpfs", _MS_NOSUID | _MS_NODEV, f"mode=0755,size=64k,{owner}".encode())
        os.makedirs(os.path.realpath(path), mode=0o755, exist_ok=True)
        _mount(f"/proc/self/fd/{fd}".encode(), os.path.realpath(path), None, _MS_BIND | _MS_REC, None)
    finally:
        os.close(fd)


def _unescape(field: str) -> str:
    """A mount point as /proc/self/mountinfo writes it: space, tab, newline and
    backslash as octal escapes."""
    for code in ("040", "011", "012", "134"):
        field = field.replace("\\" + code, chr(int(code, 8)))
    return field


def _read_only_root(home: str, size_mb: int, owner: str) -> None:
    """Every mount read-only in this mount namespace (flags it already has kept, as a
    user namespace requires), then a fresh size-limited tmpfs as the work folder."""
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE, None)
    for prefix in {sys.base_prefix, sys.base_exec_prefix}:
        _reach(prefix, owner)
    with open("/proc/self/mountinfo", encoding="utf-8") as f:
        points = {_unescape(line.split()[4]) for line in f}
    for point in sorted(points, key=len):
        try:
            kept = os.statvfs(point).f_flag
        except PermissionError:
            continue  # behind a folder this uid may not enter: it cannot write there either
        flags = _MS_REMOUNT | _MS_BIND | _MS_RDONLY
        flags |= sum(ms for st, ms in _KEPT if kept & st)
        _mount(None, point, None, flags, None)
    _mount(b"tmpfs", home, b"tmpfs", _MS_NOSUID | _MS_NODEV, f"mode=0700,size={size_mb}m,{owner}".encode())
    os.chdir(home)  # the new mount, not the folder beneath it


def _limit(limits: dict[str, int]) -> None:
    for name, value in limits.items():
        resource.setrlimit(getattr(resource, name), (value, value))


def _drop(uid: int, gid: int) -> None:
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)


def _guard(home: str) -> None:
    """The audit hook. Its tables and the functions it calls live in this closure, not
    in module globals the program could reach (`import __main__`) and rewrite."""
    root = os.path.realpath(home)
    realpath, fsdecode, getcwd, isdir, sep = os.path.realpath, os.fsdecode, os.getcwd, os.path.isdir, os.sep
    write_flags = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
    # event -> (the arguments that are paths, the arguments that are dir_fds), as
    # CPython raises them; os.replace raises os.rename
    changes: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
        "os.rename": ((0, 1), (2, 3)), "os.link": ((0, 1), (2, 3)), "os.symlink": ((1,), (2,)),
        "os.remove": ((0,), (1,)), "os.rmdir": ((0,), (1,)), "os.mkdir": ((0,), (2,)),
        "os.chmod": ((0,), (2,)), "os.chown": ((0,), (3,)), "os.utime": ((0,), (3,)),
        "os.truncate": ((0,), ()), "os.chflags": ((0,), ()), "os.setxattr": ((0,), ()),
        "os.removexattr": ((0,), ()), "os.chdir": ((0,), ()),
    }  # fmt: skip
    # a new program would run without the hook; ctypes calls the C library around it;
    # the collector's walks would reach this hook's own closure
    refused = frozenset((
        "os.system", "os.exec", "os.posix_spawn", "os.spawn", "subprocess.Popen", "os.startfile",
        "ctypes.dlopen", "ctypes.dlsym", "ctypes.call_function", "ctypes.cdata",
        "gc.get_objects", "gc.get_referrers", "gc.get_referents",
    ))  # fmt: skip

    def resolved(path: str | bytes) -> str:
        return str(realpath(fsdecode(path)))  # a relative path from the real working folder

    def inside(path: object) -> bool:
        if not isinstance(path, str | bytes):
            return False
        full = resolved(path)
        return full == root or full.startswith(root + sep)

    def check_change(event: str, args: tuple[Any, ...]) -> None:
        paths, dir_fds = changes[event]
        if any(isinstance(args[i], int) and args[i] not in (-1,) for i in dir_fds if i < len(args)):
            raise PermissionError(f"the sandbox refuses {event} relative to a dir_fd")
        for i in paths:
            path = args[i]
            if isinstance(path, int) and event == "os.truncate":
                continue  # a file open for writing: its opening was checked
            if not inside(path):
                raise PermissionError(f"the sandbox changes only its own folder, not {path!r}")

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event.startswith("socket.") and event != "socket.gethostname":
            raise PermissionError("the sandbox has no network")
        if event in refused or event.startswith("os.exec"):
            raise PermissionError(f"the sandbox refuses {event}")
        if event == "open":
            path, mode, flags = args
            if isinstance(path, int):
                return  # an fd already open: its opening was checked
            writing = (isinstance(mode, str) and any(m in mode for m in "wax+")) or (
                isinstance(flags, int) and flags & write_flags
            )
            if writing and not inside(path):
                raise PermissionError(f"the sandbox writes only inside its folder, not {path!r}")
            if isinstance(path, str | bytes) and not inside(path) and isdir(resolved(path)):
                raise PermissionError("the sandbox opens no folder outside its own (a dir_fd)")
        elif event in changes:
            check_change(event, args)

    if getcwd() != root:
        os.chdir(root)
    sys.addaudithook(hook)


def main() -> int:
    try:
        with open(sys.argv[1], encoding="utf-8") as f:
            config = json.load(f)
        home = os.getcwd()
        with open("main.py", encoding="utf-8") as f:
            source = f.read()  # read by its path before the folder's path is covered
        if config.get("cover"):
            owner = f"uid={config['uid']},gid={config['gid']}" if config.get("uid") is not None else ""
            _read_only_root(home, int(config.get("work_mb", 64)), owner)
        for name in _PRELOAD:
            __import__(name)
        _limit({str(k): int(v) for k, v in config["limits"].items()})
        if config.get("uid") is not None:
            _drop(int(config["uid"]), int(config["gid"]))
        if config.get("hook", True):
            _guard(home)
    except Exception as exc:  # the code never runs unguarded
        print(f"sandbox lock-in failed: {exc}", file=sys.stderr)
        return LOCKIN_FAILED
    sys.argv = ["main.py"]
    sys.path[:0] = [home]
    code = compile(source, "main.py", "exec")
    exec(code, {"__name__": "__main__", "__builtins__": __builtins__})
    _finished(str(config.get("nonce", "")))
    return 0


def _finished(nonce: str) -> None:
    """Say, last, that the program ran to its end: a program that exits early (before
    its tests) never reaches this line, and the parent counts only a run that does."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
    os.write(1, f"\n{nonce}\n".encode())


if __name__ == "__main__":
    sys.exit(main())
