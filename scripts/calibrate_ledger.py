"""The emergence ledger's prefilter, measured on a labelled set of (claim, text) pairs
(tests/data/ledger_calibration.jsonl) with the real all-MiniLM-L6-v2.

    .venv/bin/python scripts/calibrate_ledger.py [--sweep] [--cost] [--embedder NAME]

Each pair is a claim of an answer and a debate turn: `states` (the turn asserts the
claim, nearly verbatim or in other words), `partial` (it asserts a part: the claim joins
one of its points with another it does not make) or `unrelated` (a point on the same
topic it does not make; a near miss, the turn's own claim with its direction reversed;
or a turn on another topic). Both states and partial need the judge (each gives a
DERIVES_FROM), so they are the prefilter's positives, and a missed one is a claim's
source lost: the prefilter is tuned for recall. Near misses pass it, as they must: only
the judge can tell a claim from its reversal.

The cosine is the prefilter's own (`dagmca.debate.ledger.prefilter.units`): the claim
against the turn's closest sentence or piece. Printed: the cosines of each class, the
recall and precision of the shipped `ledger_prefilter`, and with --sweep those of every
threshold from 0.20 to 0.70, from which it was chosen.

--cost: what the ledger adds to a default session (every setting at its default, the
final traced) on the scripted strong model of the tests (tests/support/strong_fake.py, on the
1,241-word essay tests/data/four_day_week.txt): its calls beside the session's others, and
what judging pairs in both orders and the entailment checks add.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagmca.config import SessionConfig
from dagmca.debate.ledger.prefilter import units
from dagmca.similarity.choose import DEFAULT, EmbedderName, make_embedder

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "ledger_calibration.jsonl"
POSITIVE = {"states", "partial"}
NOT_NEAR = {"same_topic", "other_topic"}


def similarities(embedder: str = DEFAULT.value) -> list[tuple[str, str, float]]:
    """(label, kind, cosine of the claim and the text's closest sentence or piece) per pair,
    with the embedder of that name."""
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    emb = make_embedder(embedder)
    try:
        return [
            (r["label"], r["kind"], float(emb.similarities(r["claim"], units(r["text"])).max())) for r in rows
        ]
    finally:
        emb.close()


def rates(
    sims: list[tuple[str, str, float]], threshold: float, kinds: set[str] | None = None
) -> tuple[float, float]:
    """Recall of the positives and precision of `cosine >= threshold` (with the negatives
    of `kinds` only, when given)."""
    rows = [s for s in sims if kinds is None or s[0] in POSITIVE or s[1] in kinds]
    positives = [s for s in rows if s[0] in POSITIVE]
    passed = [s for s in rows if s[2] >= threshold]
    recall = sum(s[2] >= threshold for s in positives) / len(positives)
    precision = sum(s[0] in POSITIVE for s in passed) / len(passed) if passed else 1.0
    return recall, precision


def table(sims: list[tuple[str, str, float]], threshold: float) -> list[str]:
    by_class: dict[tuple[str, str], list[float]] = defaultdict(list)
    for label, kind, s in sims:
        by_class[(label, kind)].append(s)
    lines = [f"| label | kind | pairs | cosine min–median–max | ≥ {threshold} |", "|---|---|---|---|---|"]
    for (label, kind), values in by_class.items():
        values.sort()
        spread = f"{values[0]:.2f}–{values[len(values) // 2]:.2f}–{values[-1]:.2f}"
        passed = sum(v >= threshold for v in values)
        lines.append(f"| {label} | {kind} | {len(values)} | {spread} | {passed}/{len(values)} |")
    return lines


def cost() -> None:
    """The ledger's calls in a default session on the scripted strong model."""
    import tempfile

    from dagmca.graph import CallPhase
    from dagmca.store.sqlite import SQLiteStore
    from tests.support.sessions import run_scripted
    from tests.support.strong_fake import LONG_PASSAGE, StrongModel

    with tempfile.TemporaryDirectory() as tmp, SQLiteStore(Path(tmp) / "cost.db") as store:
        store.init_schema()
        run_scripted(store, Path(tmp), StrongModel(), passage=LONG_PASSAGE, caps=True)
        calls = store.calls("s1")
    ledger = sum(c.phase == CallPhase.LEDGER for c in calls)
    checks = sum(c.agent == "ledger-entailment" for c in calls)
    swapped = sum(c.agent == "judge-swapped" for c in calls)
    others = len(calls) - ledger
    print(
        f"\na default session on the scripted strong model: {others} calls, and the ledger's {ledger} "
        f"(1 split, {ledger - 1 - checks} verdicts, {checks} entailment checks): +{ledger / others:.1%}; "
        f"the pairs' second order {swapped} and the entailment checks: "
        f"{(swapped + checks) / len(calls):.1%} of all {len(calls)} calls"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sweep", action="store_true", help="recall and precision over thresholds")
    parser.add_argument("--cost", action="store_true", help="the ledger's calls in a default session")
    parser.add_argument(
        "--embedder",
        default=DEFAULT.value,
        choices=[e.value for e in EmbedderName],
        help="the embedder measured",
    )
    args = parser.parse_args()
    threshold = SessionConfig().ledger_prefilter
    sims = similarities(args.embedder)
    print(f"embedder: {args.embedder}\n")
    print("Claims against turns (the claim against the turn's closest sentence or piece):")
    print("\n".join(table(sims, threshold)))
    r, p = rates(sims, threshold)
    _, p_apart = rates(sims, threshold, NOT_NEAR)
    print(
        f"prefilter {threshold}: recall on states and partial {r:.2f}, precision {p:.2f} "
        f"({p_apart:.2f} leaving out the near misses, which only the judge can reject)"
    )
    if args.sweep:
        print("\nthreshold  recall  precision  precision without near misses")
        for k in range(20, 75, 5):
            th = k / 100
            r, p = rates(sims, th)
            _, pa = rates(sims, th, NOT_NEAR)
            print(f"  {th:.2f}     {r:.2f}    {p:.2f}       {pa:.2f}")
    if args.cost:
        cost()


if __name__ == "__main__":
    main()
