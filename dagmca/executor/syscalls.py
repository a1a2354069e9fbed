"""The seccomp filter every sandboxed process runs under: the system calls a checked
function never needs are refused (EPERM), whatever the process's privileges.

Built once per process with libseccomp (through pyseccomp), which knows each
architecture's call numbers, and handed to bubblewrap as compiled BPF (`--seccomp FD`).
Everything else is allowed: a filter that lists what a Python program may do breaks on
the next interpreter's needs, while what is refused here is what reaches past the
sandbox's other walls or into the kernel's rarely used corners.
"""

from __future__ import annotations

import errno
import functools
import tempfile

# what each refusal stops, as the guide and `dagmca doctor` say it
REFUSED: dict[str, tuple[str, ...]] = {
    # every family, unix sockets included: a checked function needs none (socketpair
    # stays: it reaches nothing outside, and asyncio's event loop wakes itself with one)
    "sockets": ("socket",),
    # io_uring runs socket, open and other calls where seccomp does not see them
    "io_uring": ("io_uring_setup", "io_uring_enter", "io_uring_register"),
    "tracing": ("ptrace", "process_vm_readv", "process_vm_writev", "perf_event_open"),
    "mounts": (
        "mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen",
        "fsconfig", "fsmount", "fspick", "mount_setattr",
    ),
    "namespaces": ("unshare", "setns"),
    "keyrings": ("keyctl", "add_key", "request_key"),
    "kernel": (
        "bpf", "userfaultfd", "init_module", "finit_module", "delete_module", "kexec_load",
        "kexec_file_load", "open_by_handle_at", "name_to_handle_at", "fanotify_init", "quotactl",
        "swapon", "swapoff", "reboot", "syslog", "acct", "settimeofday", "clock_settime",
        "clock_adjtime", "adjtimex", "iopl", "ioperm", "vhangup", "uselib",
    ),
    "SysV IPC": (
        "shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semtimedop", "semctl",
        "msgget", "msgsnd", "msgrcv", "msgctl",
    ),
}  # fmt: skip
# clone's flags that make a namespace (CLONE_NEWNS ... CLONE_NEWNET, CLONE_NEWTIME)
_NEW_NAMESPACE = (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000, 0x40000000, 0x80)


class FilterUnavailable(RuntimeError):
    """libseccomp (or pyseccomp) cannot be loaded here."""


@functools.cache
def compiled() -> bytes:
    """The filter as BPF, for `bwrap --seccomp`. Raises FilterUnavailable."""
    try:
        import pyseccomp as sc
    except (ImportError, OSError, RuntimeError) as exc:  # the library itself is missing
        raise FilterUnavailable(f"libseccomp cannot be loaded ({exc})") from None
    refuse = sc.ERRNO(errno.EPERM)
    rules = sc.SyscallFilter(sc.ALLOW)
    for calls in REFUSED.values():
        for call in calls:
            try:
                rules.add_rule(refuse, call)
            except (OSError, ValueError, RuntimeError):  # no such call on this architecture
                continue
    for flag in _NEW_NAMESPACE:
        rules.add_rule(refuse, "clone", sc.Arg(0, sc.MASKED_EQ, flag, flag))
    # clone3 passes its flags in memory, where a filter cannot read them: refused as
    # unknown, the C library falls back to clone, whose flags are checked above
    rules.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
    with tempfile.TemporaryFile() as f:
        rules.export_bpf(f)
        f.seek(0)
        return f.read()


def summary() -> str:
    """What the filter refuses, in one line."""
    return "; ".join(
        f"{what} ({', '.join(calls[:4])}{', ...' if len(calls) > 4 else ''})"
        for what, calls in REFUSED.items()
    )
