"""Simulated evals through dagmca's own statistics (`dagmca.evaluation`), for the figures
the benchmarks page cites: seeded, records only (no session is run).

    python scripts/eval_simulations.py length --evals 100     # the length-controlled win rate

`length`: two arms of equal quality, one's answers 1.3x the other's on average, judged by
a judge that prefers the longer answer (always; or with a chance rising with the length
difference, strongly or mildly; or not at all, a coin): how often the raw judged
comparison is significant (p Holm < 0.05) and how often the length-controlled win
rate's interval leaves out 0.5."""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dagmca.evaluation.report import comparisons
from tests.support.simulated_evals import length_biased

JUDGES: dict[str, float | None] = {"always longer": None, "strong (3)": 3.0, "mild (1)": 1.0, "coin (0)": 0.0}


def length(evals: int, tasks: list[int], seed: int) -> None:
    print(f"| judge | tasks | raw significant | length-controlled significant |  ({evals} evals a row)")
    print("|---|---|---|---|")
    for name, strength in JUDGES.items():
        for n in tasks:
            rng = random.Random(seed)
            raw = controlled = 0
            for i in range(evals):
                runs, verdicts = length_biased(rng, n, strength)
                (c,) = comparisons(["a", "b"], runs, verdicts, seed=i)
                raw += c.p_holm < 0.05
                assert c.lc_lo is not None and c.lc_hi is not None
                controlled += not c.lc_lo <= 0.5 <= c.lc_hi
            print(f"| {name} | {n} | {raw / evals:.0%} | {controlled / evals:.0%} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    lc = sub.add_parser("length", help="the length-controlled win rate under a length-biased judge")
    lc.add_argument("--evals", type=int, default=100)
    lc.add_argument("--tasks", default="20,30,40")
    lc.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    if args.what == "length":
        length(args.evals, [int(t) for t in args.tasks.split(",")], args.seed)


if __name__ == "__main__":
    main()
