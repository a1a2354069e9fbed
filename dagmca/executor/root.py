"""The sandbox's root: only what the interpreter needs, read-only.

What that is, is asked of the interpreter itself, once per process: a probe run of it
(outside any sandbox) imports the standard modules a small solution uses and lists the
files it has mapped (the interpreter, its shared libraries, its locale). The root holds
the interpreter's prefix, the folders of those files, the dynamic loader the executable
names, and the symbolic links on the way to each (`/lib -> usr/lib`), so every path the
interpreter uses resolves inside as it does outside. Nothing else of the host is there:
no `/tmp`, `/run`, `/home`, `/etc`, no store, no project.
"""

from __future__ import annotations

import functools
import json
import os
import struct
import subprocess
import sys
from dataclasses import dataclass

# run by the probe: what a small solution imports, so that the libraries behind them
# (libm, libz, libffi, libcrypto, ...) are mapped and found
_PROBE = (
    "import math, cmath, re, json, decimal, fractions, statistics, random, hashlib, zlib, "
    "collections, itertools, functools, heapq, bisect, datetime, threading, concurrent.futures, "
    "struct, array, ctypes, unicodedata, string, textwrap, typing, dataclasses, copy, sys\n"
    "paths = set()\n"
    "for line in open('/proc/self/maps'):\n"
    "    part = line.split(maxsplit=5)\n"
    "    if len(part) == 6 and part[5].startswith('/'):\n"
    "        paths.add(part[5].rstrip('\\n'))\n"
    "print(json.dumps({'paths': sorted(paths), 'prefixes': [sys.base_prefix, sys.base_exec_prefix]}))\n"
)
ENVIRONMENT = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
_PT_INTERP = 3


@dataclass(frozen=True)
class Root:
    executable: str  # the interpreter's real path (a venv's python is a link to it)
    folders: tuple[str, ...]  # bound read-only at the same path
    links: tuple[tuple[str, str], ...]  # (target, where): the links on the way

    def options(self) -> list[str]:
        """bubblewrap's options that lay the root out."""
        made: list[str] = []
        for folder in self.folders:
            made += ["--ro-bind", folder, folder]
        for target, where in self.links:
            made += ["--symlink", target, where]
        return made


def _route(path: str) -> tuple[list[tuple[str, str]], str]:
    """The symbolic links met on the way to `path`, each at its real place, and the
    real path it leads to."""
    links: list[tuple[str, str]] = []
    parts, here = [p for p in path.split("/") if p], "/"
    hops = 0
    while parts:
        step = os.path.join(here, parts.pop(0))
        if os.path.islink(step) and hops < 40:
            hops += 1
            target = os.readlink(step)
            links.append((target, step))
            parts = [p for p in os.path.normpath(os.path.join(here, target)).split("/") if p] + parts
            here = "/"
        else:
            here = step
    return links, here


def elf_interpreter(executable: str) -> str | None:
    """The dynamic loader a 64-bit little-endian ELF executable names (PT_INTERP)."""
    with open(executable, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
            return None
        (phoff,) = struct.unpack_from("<Q", head, 0x20)
        entry_size, count = struct.unpack_from("<HH", head, 0x36)
        for i in range(count):
            f.seek(phoff + i * entry_size)
            kind, _, offset, _, _, size = struct.unpack("<IIQQQQ", f.read(40))
            if kind == _PT_INTERP:
                f.seek(offset)
                return f.read(size).rstrip(b"\0").decode()
    return None


def _outermost(folders: set[str]) -> list[str]:
    """The folders not inside another of them."""
    kept: list[str] = []
    for folder in sorted(folders):
        if not any(folder == k or folder.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(folder)
    return kept


@functools.cache
def root() -> Root:
    """The root, asked of this process's interpreter. Raises OSError or
    subprocess.SubprocessError when the probe cannot run."""
    executable = os.path.realpath(sys.executable)
    probe = subprocess.run(
        [executable, "-I", "-S", "-B", "-X", "utf8", "-c", _PROBE],
        env=ENVIRONMENT, capture_output=True, timeout=60, check=True, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    found = json.loads(probe.stdout)
    loader = elf_interpreter(executable)
    links: dict[str, str] = {}
    folders: set[str] = set()
    for path in [*found["prefixes"], *found["paths"], executable, *([loader] if loader else [])]:
        on_the_way, leads_to = _route(path)
        links.update({where: target for target, where in on_the_way})
        folders.add(leads_to if os.path.isdir(leads_to) else os.path.dirname(leads_to))
    if os.path.exists("/etc/ld.so.cache"):  # where the loader looks a library up first
        folders.add("/etc/ld.so.cache")
    return Root(executable, tuple(_outermost(folders)), tuple(sorted((t, w) for w, t in links.items())))
