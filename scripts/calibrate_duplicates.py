"""The duplicate-tension threshold, measured on a labelled set of question pairs
(tests/data/duplicate_questions.jsonl) with the real all-MiniLM-L6-v2.

    .venv/bin/python scripts/calibrate_duplicates.py [--embedder NAME]

Each pair is two tension questions an observer might raise: `same` (one question
asked in other words) or `different` (another question on the same topic, often in
nearly the same words: the second paragraph's evidence against the final one's).
Printed: the cosines of each class, and recall (of `same`) and false merges (of
`different`) for thresholds from 0.50 to 0.98; the shipped `duplicate_threshold` is
marked, and the shipped `duplicate_prefilter`. By cosine alone, a false merge loses a
question (it becomes a flag of its twin), a missed one leaves a duplicate stub for the
selector's diversity and the ledger to handle, so the threshold (what merges without
the judge: on a flag's arrival, within its debate's line, and with --judge embedding)
is the lowest that merges no `different` pair. Across the session the judge decides,
and the cosine only picks the candidates: the prefilter is where most paraphrases
still pass.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagmca.config import SessionConfig
from dagmca.similarity.choose import DEFAULT, EmbedderName, make_embedder

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "duplicate_questions.jsonl"


def similarities(embedder: str = DEFAULT.value) -> list[tuple[str, float]]:
    """(label, cosine) for every labelled pair, as the observers' ledger compares them, with
    the embedder of that name."""
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    emb = make_embedder(embedder)
    try:
        return [(r["label"], emb.similarity(r["a"], r["b"])) for r in rows]
    finally:
        emb.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--embedder",
        default=DEFAULT.value,
        choices=[e.value for e in EmbedderName],
        help="the embedder measured",
    )
    args = parser.parse_args()
    sims = similarities(args.embedder)
    print(f"embedder: {args.embedder}")
    shipped, prefilter = SessionConfig().duplicate_threshold, SessionConfig().duplicate_prefilter
    same = sorted(s for label, s in sims if label == "same")
    different = sorted(s for label, s in sims if label == "different")
    for name, values in (("same", same), ("different", different)):
        print(
            f"{name:9s} {len(values)} pairs: cosine min {values[0]:.3f}, median "
            f"{values[len(values) // 2]:.3f}, max {values[-1]:.3f}"
        )
    print("threshold  recall of same  false merges of different")
    for t in sorted({x / 100 for x in range(50, 100, 2)} | {shipped, prefilter}):
        recall = sum(s >= t for s in same) / len(same)
        false = sum(s >= t for s in different)
        mark = "  <- shipped threshold" if abs(t - shipped) < 1e-9 else ""
        mark = "  <- shipped prefilter (the judge decides)" if abs(t - prefilter) < 1e-9 else mark
        print(f"  {t:.2f}     {recall:5.0%}          {false:2d} of {len(different)}{mark}")
    for name, t in (("prefilter", prefilter), ("threshold", shipped)):
        passed = [label for label, s in sims if s >= t]
        recall = sum(s >= t for s in same) / len(same)
        precision = passed.count("same") / len(passed) if passed else 1.0
        print(f"{name} {t}: recall of same {recall:.2f}, precision {precision:.2f}")


if __name__ == "__main__":
    main()
