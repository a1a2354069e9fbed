"""Simulated evals through dagmca's own statistics (`dagmca.evaluation`), for the figures
the benchmarks page cites: seeded, records only (no session is run).

    python scripts/eval_simulations.py length --evals 100     # the length-controlled win rate
    python scripts/eval_simulations.py power                  # the MDE the dry run states

`length`: two arms of equal quality, one's answers 1.3x the other's on average, judged by
a judge that prefers the longer answer (always; or with a chance rising with the length
difference, strongly or mildly; or not at all, a coin): how often the raw judged
comparison is significant (p Holm < 0.05) and how often the length-controlled win
rate's interval leaves out 0.5.

`power`: the smallest difference found 80% of the time (`dagmca.evaluation.power`, the
report's own test simulated) on the dry run's default assumption, by the tasks, for one
comparison and for the six of the default four arms (Holm over them), and the tasks an
effect of 0.10 and 0.15 needs."""

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


def power_table(tasks: list[int], families: list[int]) -> None:
    from dagmca.evaluation.power import Discordance, mde, tasks_needed

    print(
        "| kind | comparisons | " + " | ".join(f"{n} tasks" for n in tasks) + " | 0.10 needs | 0.15 needs |"
    )
    print("|---|---|" + "---|" * (len(tasks) + 2))
    for kind in ("accuracy", "judged"):
        assumed = Discordance.assumed(kind)  # type: ignore[arg-type]
        for k in families:
            cells = [mde(kind, assumed, n, 1, k) for n in tasks]  # type: ignore[arg-type]
            need = [tasks_needed(kind, assumed, 1, e, k, start=tasks[0]) for e in (0.10, 0.15)]  # type: ignore[arg-type]
            shown = [f"{c:.2f}" if c is not None else "none" for c in cells]
            print(
                f"| {kind} | {k} | " + " | ".join(shown) + " | " + " | ".join(str(n) for n in need) + " |",
                flush=True,
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    lc = sub.add_parser("length", help="the length-controlled win rate under a length-biased judge")
    lc.add_argument("--evals", type=int, default=100)
    lc.add_argument("--tasks", default="20,30,40")
    lc.add_argument("--seed", type=int, default=11)
    pw = sub.add_parser("power", help="the MDE the dry run states on its default assumption")
    pw.add_argument("--tasks", default="5,10,20,40,80,160")
    pw.add_argument("--comparisons", default="1,6")
    args = parser.parse_args()
    if args.what == "power":
        power_table([int(t) for t in args.tasks.split(",")], [int(k) for k in args.comparisons.split(",")])
    if args.what == "length":
        length(args.evals, [int(t) for t in args.tasks.split(",")], args.seed)


if __name__ == "__main__":
    main()
