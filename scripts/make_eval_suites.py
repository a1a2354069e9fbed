"""Write the shipped eval suites (`examples/eval/<suite>.jsonl`), or check them.

Each suite is generated from a seed and a difficulty by `dagmca.evaluation.suites`,
every answer worked out by the generator and again by its own checker (the logic grids'
by a solver that requires the solution unique); a task whose checker disagrees stops
the script. `--check` regenerates every shipped file and fails when one differs by a
byte or a checker disagrees.

    python scripts/make_eval_suites.py                 # write examples/eval/*.jsonl (40 each, seed 0)
    python scripts/make_eval_suites.py --check         # what CI runs: the shipped files, as generated
    python scripts/make_eval_suites.py --suite dates --n 200 --seed 7 --out /tmp/dates.jsonl
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagmca.evaluation.suites import DIFFICULTY, SEED, SIZE, SUITES, generate, jsonl

SHIPPED = Path(__file__).resolve().parents[1] / "examples" / "eval"


def made(name: str, n: int, seed: int, difficulty: int) -> str:
    tasks = generate(name, n, seed, difficulty)
    wrong = [m.task.id for m in tasks if not SUITES[name].check(m)]
    if wrong:
        raise SystemExit(f"{name}: the checker disagrees on {', '.join(wrong)}")
    return jsonl([m.task for m in tasks])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", choices=sorted(SUITES), help="one suite (default: every one)")
    ap.add_argument("--n", type=int, default=SIZE)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--difficulty", type=int, default=DIFFICULTY, choices=(1, 2, 3))
    ap.add_argument("--out", type=Path, help="with --suite: the file to write (default: the shipped one)")
    ap.add_argument("--check", action="store_true", help="check the shipped files instead of writing them")
    args = ap.parse_args()
    names = [args.suite] if args.suite else list(SUITES)
    for name in names:
        text = made(name, args.n, args.seed, args.difficulty)
        path = args.out if args.out and args.suite else SHIPPED / f"{name}.jsonl"
        if args.check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                print(
                    f"{path}: not what the generator makes; run scripts/make_eval_suites.py", file=sys.stderr
                )
                return 1
            print(f"{path}: {args.n} tasks, as generated, every answer checked")
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}: {args.n} tasks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
