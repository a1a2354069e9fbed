"""Write arithmetic tasks in the style of Du et al. 2023 ("Improving Factuality and
Reasoning in Language Models through Multiagent Debate"): a + b * c + d - e * f with
small integers, an exact answer each (negative ones included). Seeded, so the shipped file can be regenerated.

    python scripts/make_arithmetic_tasks.py --n 20 --seed 0 > examples/eval/arithmetic.jsonl
"""

from __future__ import annotations

import argparse
import json
import random


def tasks(n: int, seed: int) -> list[dict[str, str]]:
    rng = random.Random(seed)
    found = []
    for i in range(n):
        a, b, c, d, e, f = (rng.randint(0, 30) for _ in range(6))
        expression = f"{a}+{b}*{c}+{d}-{e}*{f}"
        answer = a + b * c + d - e * f
        found.append(
            {
                "id": f"arith-{i + 1:02d}",
                "question": f"What is the result of {expression}? Answer with the number only.",
                "answer": str(answer),
                "scoring": "exact",  # a number: matched exactly, as a number
            }
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for task in tasks(args.n, args.seed):
        print(json.dumps(task))


if __name__ == "__main__":
    main()
