"""The embedding prefilter of the judged decisions, measured on the labelled set
(tests/data/judge_calibration.jsonl) with the real all-MiniLM-L6-v2.

    .venv/bin/python scripts/calibrate_judge.py [--sweep] [--embedder NAME]

For each class: how many of its pairs reach the shipped prefilter (the candidates the
LLM judge sees) and the cheap `--judge embedding` rule. Positives of the pair prefilter
are converge, contradict and elaborate (all need a verdict); of the stub prefilter,
answers and topic (a text on the stub's topic may make it relevant). `--sweep` prints
recall and precision over thresholds, from which the shipped ones were chosen. The
retired similarity-only supersede rule is shown for comparison.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagmca.config import SessionConfig
from dagmca.similarity.choose import DEFAULT, EmbedderName, make_embedder

DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "judge_calibration.jsonl"
# what closed a stub before the judge: cosine >= 0.65, whatever the text said
RETIRED_SUPERSEDE = 0.65
POSITIVE = {"pair": {"converge", "contradict", "elaborate"}, "stub": {"answers", "topic"}}


def similarities(embedder: str = DEFAULT.value) -> list[tuple[str, str, float]]:
    """(task, label, cosine) for every labelled pair, with the embedder of that name."""
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    emb = make_embedder(embedder)
    try:
        out = []
        for r in rows:
            a, b = (r["a"], r["b"]) if r["task"] == "pair" else (r["question"], r["text"])
            # as the pipeline compares: a stub with the piece of a text most like it
            sim = emb.similarity(a, b) if r["task"] == "pair" else emb.best_similarity(a, b)
            out.append((r["task"], r["label"], sim))
        return out
    finally:
        emb.close()


def rates(
    sims: list[tuple[str, str, float]], task: str, threshold: float, positive: set[str]
) -> tuple[float, float]:
    """Recall and precision of `cosine >= threshold` for the labels in `positive`."""
    hits = [(label in positive) for t, label, s in sims if t == task and s >= threshold]
    n_pos = sum(1 for t, label, _ in sims if t == task and label in positive)
    recall = sum(hits) / n_pos if n_pos else 0.0
    precision = sum(hits) / len(hits) if hits else 1.0
    return recall, precision


def table(sims: list[tuple[str, str, float]], task: str, rules: dict[str, float]) -> list[str]:
    by_label: dict[str, list[float]] = defaultdict(list)
    for t, label, s in sims:
        if t == task:
            by_label[label].append(s)
    head = "| class | pairs | cosine min–median–max | " + " | ".join(rules) + " |"
    lines = [head, "|" + "---|" * (3 + len(rules))]
    for label, values in by_label.items():
        values.sort()
        cells = [f"{sum(v >= th for v in values)}/{len(values)}" for th in rules.values()]
        spread = f"{values[0]:.2f}–{values[len(values) // 2]:.2f}–{values[-1]:.2f}"
        lines.append(f"| {label} | {len(values)} | {spread} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sweep", action="store_true", help="recall and precision over thresholds")
    parser.add_argument(
        "--embedder",
        default=DEFAULT.value,
        choices=[e.value for e in EmbedderName],
        help="the embedder measured",
    )
    args = parser.parse_args()
    cfg = SessionConfig()
    sims = similarities(args.embedder)
    print(f"embedder: {args.embedder}\n")
    pair_rules = {
        f"prefilter ≥ {cfg.pair_prefilter}": cfg.pair_prefilter,
        f"embedding merge ≥ {cfg.merge_threshold}": cfg.merge_threshold,
    }
    stub_rules = {
        f"prefilter ≥ {cfg.stub_prefilter}": cfg.stub_prefilter,
        f"embedding relevant ≥ {cfg.revisit_threshold}": cfg.revisit_threshold,
        f"retired supersede ≥ {RETIRED_SUPERSEDE}": RETIRED_SUPERSEDE,
    }
    print("Branch pairs (resolution against resolution):")
    print("\n".join(table(sims, "pair", pair_rules)))
    r, p = rates(sims, "pair", cfg.pair_prefilter, POSITIVE["pair"])
    print(f"prefilter recall on converge/contradict/elaborate {r:.2f}, precision {p:.2f}\n")
    print("Stubs (question against a new node's text):")
    print("\n".join(table(sims, "stub", stub_rules)))
    r, p = rates(sims, "stub", cfg.stub_prefilter, POSITIVE["stub"])
    print(f"prefilter recall on answers/topic {r:.2f}, precision {p:.2f}")
    r, p = rates(sims, "stub", RETIRED_SUPERSEDE, {"answers"})
    print(f"the retired similarity-only supersede rule on answers: recall {r:.2f}, precision {p:.2f}")
    if args.sweep:
        for task in ("pair", "stub"):
            print(f"\n{task}: threshold  recall  precision")
            for k in range(10, 90, 5):
                th = k / 100
                r, p = rates(sims, task, th, POSITIVE[task])
                print(f"  {th:.2f}  {r:.2f}  {p:.2f}")


if __name__ == "__main__":
    main()
