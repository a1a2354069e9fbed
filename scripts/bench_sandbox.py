"""The executor's overhead, this checkout's against an older one's, in paired runs.

    mkdir /tmp/dagmca-before && git archive main | tar -x -C /tmp/dagmca-before   # any commit
    .venv/bin/python scripts/bench_sandbox.py --before /tmp/dagmca-before [--rounds 12] [--json]
    .venv/bin/python scripts/bench_sandbox.py --parts     # this checkout's run, part by part

Two figures, each measured in turns (before, after, before, ...) so that a machine whose
speed drifts (other work on it) moves both alike, and compared pair by pair:

- **per run**: start to verdict of one trivial answer (`def f(x): return x`, one assert),
  runs one after another, the median of a block of `--block` runs a turn;
- **a stream**: `--tasks` code tasks (the shipped stream's reference solutions, in turn)
  checked in `--slots` parallel threads, the wall time of the whole stream a turn.

Each side runs in a process of its own that imports that checkout's code (an older
executor is `dagmca.swarm.sandbox.run` of the program, answer then tests; this one is
`dagmca.executor.check`). Printed: each side's median, and the after/before ratio's
median over the pairs with a 95% bootstrap interval; and, as the noise floor, the same
ratio between two blocks of the older side itself.

`--parts` times, in this checkout alone, what a run is made of: the interpreter's start,
its JSON import, one sandbox's start (the walls, with and without the seccomp filter),
a control group made and removed, and the whole run; medians of `--block` x 4.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STREAM = ROOT / "examples" / "swarm" / "code.jsonl"
TRIVIAL = ("def f(x):\n    return x\n", "assert f(1) == 1\n", "f")


def _tests(tests: str | list[str]) -> str:
    return tests if isinstance(tests, str) else "\n".join(tests)


def _worker() -> None:
    """One side: read a command a line, answer with JSON. Imports the checkout that
    PYTHONPATH names."""
    try:
        from dagmca.executor import check as new_check

        def one(code: str, tests: str, entry: str) -> bool:
            return new_check(code, tests, entry).passed
    except ImportError:  # an older checkout: one program, the answer's code then the tests
        from dagmca.swarm.sandbox import run as old_run

        def one(code: str, tests: str, entry: str) -> bool:
            return old_run(f"{code}\n\n\n{tests}").passed

    tasks = [json.loads(line) for line in STREAM.read_text().splitlines() if line.strip()]
    cases = [(t["solution"], _tests(t["tests"]), t["entry_point"]) for t in tasks]
    for line in sys.stdin:
        kind, count, slots = line.split()
        if kind == "single":
            times = []
            for _ in range(int(count)):
                started = time.perf_counter()
                assert one(*TRIVIAL), "the trivial answer failed"
                times.append(time.perf_counter() - started)
            print(json.dumps(statistics.median(times)), flush=True)
        else:
            todo = [cases[i % len(cases)] for i in range(int(count))]
            started = time.perf_counter()
            with ThreadPoolExecutor(int(slots)) as pool:
                passed = list(pool.map(lambda case: one(*case), todo))
            assert all(passed), "a reference solution failed"
            print(json.dumps(time.perf_counter() - started), flush=True)


class Side:
    def __init__(self, checkout: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(checkout)}
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--worker"], env=env, cwd=checkout, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True,
        )  # fmt: skip

    def ask(self, command: str) -> float:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        return float(json.loads(self.proc.stdout.readline()))

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def _interval(ratios: list[float], seed: int = 0) -> tuple[float, float]:
    """A 95% bootstrap interval of the median ratio."""
    rng = random.Random(seed)
    medians = sorted(statistics.median(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
    return medians[49], medians[1949]


def _summary(before: list[float], after: list[float], floor: list[float]) -> dict[str, Any]:
    ratios = [a / b for a, b in zip(after, before, strict=True)]
    same = [a / b for a, b in zip(floor, before, strict=True)]
    return {
        "before_median_s": statistics.median(before),
        "after_median_s": statistics.median(after),
        "ratio_median": statistics.median(ratios),
        "ratio_95": _interval(ratios),
        "noise_floor_ratio_95": _interval(same),
        "pairs": len(ratios),
    }


def _parts(count: int) -> dict[str, float]:
    sys.path.insert(0, str(ROOT))
    from dagmca.executor import Limits, cgroup, check, root, walls

    def median_ms(step: Any) -> float:
        times = []
        for _ in range(count):
            started = time.perf_counter()
            step()
            times.append(time.perf_counter() - started)
        return round(statistics.median(times) * 1000, 1)

    executable, binary = root.root().executable, walls.bwrap()
    assert binary is not None, "no bwrap here"

    def sandboxed(seccomp: bool) -> None:
        fd = walls.seccomp_pipe()
        command = walls.command(binary, Limits(), fd, ["-I", "-S", "-c", "pass"])
        if not seccomp:
            at = command.index("--seccomp")
            del command[at : at + 2]
        subprocess.run(command, pass_fds=(fd,), check=True)
        os.close(fd)

    def group() -> None:
        where = cgroup.hierarchy()
        if where is not None:
            made = cgroup.RunGroup.make(where, 512, 16)
            made.kill()
            made.remove()

    check(*TRIVIAL)  # the walls tried, the root asked of the interpreter, the filter compiled
    return {
        "interpreter start": median_ms(
            lambda: subprocess.run([executable, "-I", "-S", "-c", "pass"], check=True)
        ),
        "interpreter start and import json": median_ms(
            lambda: subprocess.run([executable, "-I", "-S", "-c", "import json"], check=True)
        ),
        "one sandbox, no seccomp filter": median_ms(lambda: sandboxed(False)),
        "one sandbox": median_ms(lambda: sandboxed(True)),
        "control group made and removed": median_ms(group),
        "a whole run (two sandboxes)": median_ms(lambda: check(*TRIVIAL)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--before", type=Path, help="a checkout of the older code")
    parser.add_argument("--parts", action="store_true", help="time this checkout's run part by part")
    parser.add_argument("--rounds", type=int, default=12, help="turns of each side, for each figure")
    parser.add_argument("--block", type=int, default=5, help="runs a turn, for the per-run figure")
    parser.add_argument("--tasks", type=int, default=100, help="tasks in the stream")
    parser.add_argument("--slots", type=int, default=4, help="the stream's parallel slots")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.parts:
        parts = _parts(args.block * 4)
        print(
            json.dumps(parts, indent=2) if args.json else "\n".join(f"{k}: {v} ms" for k, v in parts.items())
        )
        return
    if args.before is None:
        parser.error("--before is needed (or --parts)")
    before, again, after = Side(args.before), Side(args.before), Side(ROOT)
    figures: dict[str, dict[str, Any]] = {}
    try:
        streams = max(3, args.rounds // 2)
        for name, command, warm, rounds in (
            ("per_run", f"single {args.block} 1", "single 2 1", args.rounds),
            ("stream", f"stream {args.tasks} {args.slots}", f"stream 8 {args.slots}", streams),
        ):
            for side in (before, again, after):
                side.ask(warm)
            b, a, f = [], [], []
            for turn in range(rounds):
                order = [(before, b), (after, a), (again, f)]
                random.Random(turn).shuffle(order)
                for side, into in order:
                    into.append(side.ask(command))
            figures[name] = _summary(b, a, f)
    finally:
        for side in (before, again, after):
            side.close()
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    for name, s in figures.items():
        low, high = s["ratio_95"]
        nlow, nhigh = s["noise_floor_ratio_95"]
        medians = f"before {s['before_median_s'] * 1000:.0f} ms, after {s['after_median_s'] * 1000:.0f} ms"
        ratio = f"after/before {s['ratio_median']:.2f} [{low:.2f}, {high:.2f}] over {s['pairs']} pairs"
        print(f"{name}: {medians} (medians); {ratio}; noise floor (before/before) [{nlow:.2f}, {nhigh:.2f}]")


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        _worker()
    else:
        main()
