"""The convergence threshold, measured on a labelled set of round pairs
(tests/data/convergence_pairs.jsonl), and how many debates stop early on the example
passages.

    .venv/bin/python scripts/calibrate_convergence.py [--embedder NAME]
    .venv/bin/python scripts/calibrate_convergence.py --count [--llm openai --base-url URL] [--rounds N]

Each pair is a root's output in one round and the next: `same` (reworded, reordered,
a word added: no material change) or `changed` (a point added or dropped, a
disagreement added or dropped, a position or conclusion turned around). Printed: the
no-change score of each class (engines/convergence.py: each sentence matched to its
closest in the other output, the worst match), and for thresholds from 0.50 to 0.98
how many `same` pairs would stop the debate and how many `changed` ones would stop it
wrongly; the shipped `convergence_threshold` is marked. A debate stopped wrongly loses
its later rounds, one that runs on costs a round, so the threshold is the lowest that
stops on no `changed` pair, but the one whose conclusion is turned around in the same
words: no embedding sees that (in a question session, the answer tally does).

`--count` runs one session per example passage (examples/*.txt) with the settings
given and prints, per passage, the rounds its main debate ran and whether it
converged: the share of debates that stop early. It makes real model calls: run it on
a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagmca.config import SessionConfig
from dagmca.debate.engines.convergence import no_change_now
from dagmca.similarity.choose import DEFAULT, EmbedderName, make_embedder

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "convergence_pairs.jsonl"
EXAMPLES = ROOT / "examples"


def scores(embedder: str = DEFAULT.value) -> list[tuple[str, str, float]]:
    """(label, kind, score) for every labelled pair, with the embedder of that name."""
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    emb = make_embedder(embedder)
    try:
        return [(r["label"], r["kind"], no_change_now(emb, r["before"], r["after"])) for r in rows]
    finally:
        emb.close()


def calibrate(embedder: str) -> None:
    found = scores(embedder)
    shipped = SessionConfig().convergence_threshold
    print(f"embedder: {embedder}")
    for label, kind, s in sorted(found, key=lambda x: x[2]):
        print(f"  {s:.4f}  {label:8s} {kind}")
    same = [s for label, _, s in found if label == "same"]
    changed = [s for label, _, s in found if label == "changed"]
    print("threshold  same pairs stopped  changed pairs stopped (wrongly)")
    for t in sorted({x / 100 for x in range(50, 100, 2)} | {shipped}):
        mark = "  <- shipped" if abs(t - shipped) < 1e-9 else ""
        print(
            f"  {t:.3f}    {sum(s >= t for s in same):2d} of {len(same)}"
            f"            {sum(s >= t for s in changed):2d} of {len(changed)}{mark}"
        )


def count(llm: str, base_url: str | None, rounds: int) -> None:
    """One session per example passage: did its main debate stop before `rounds`?"""
    from dagmca.api import run
    from dagmca.graph import DebateNode, DebateOrigin, NodeKind, node_from_record
    from dagmca.store import open_existing

    passages = sorted(EXAMPLES.glob("*.txt"))
    stopped = 0
    with tempfile.TemporaryDirectory() as tmp:
        store = str(Path(tmp) / "graph.db")
        for i, path in enumerate(passages):
            settings: dict[str, Any] = {"llm": llm, "rounds": rounds, "max_depth": 0}
            if base_url:
                settings["base_url"] = base_url
            result = run(
                path.read_text(encoding="utf-8"),
                store=store,
                session=f"convergence{i}",
                reports=Path(tmp) / f"reports{i}",
                settings=settings,
            )
            graph = open_existing(store)
            try:
                debates = [node_from_record(r) for r in graph.nodes(result.id, NodeKind.DEBATE)]
            finally:
                graph.close()
            main = next(d for d in debates if isinstance(d, DebateNode) and d.origin is DebateOrigin.MAIN)
            early = main.converged and main.rounds < rounds
            stopped += early
            print(f"{path.name}: {main.rounds} of {rounds} rounds, converged {main.converged}")
    print(f"stopped early: {stopped} of {len(passages)} debates")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--embedder", default=DEFAULT.value, choices=[e.value for e in EmbedderName])
    parser.add_argument("--count", action="store_true", help="count the debates that stop early")
    parser.add_argument(
        "--llm", default="local", choices=["local", "openai"], help="with --count: the backend"
    )
    parser.add_argument("--base-url", default=None, help="with --count --llm openai: the endpoint")
    parser.add_argument("--rounds", type=int, default=3, help="with --count: the rounds allowed")
    args = parser.parse_args()
    if args.count:
        count(args.llm, args.base_url, args.rounds)
    else:
        calibrate(args.embedder)


if __name__ == "__main__":
    main()
