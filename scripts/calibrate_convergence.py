"""The convergence threshold, chosen on one half of a labelled set of round pairs
(tests/data/convergence_pairs.jsonl) and checked on the other, and how many debates stop
early on the example passages.

    .venv/bin/python scripts/calibrate_convergence.py [--embedder NAME] [--json]
    .venv/bin/python scripts/calibrate_convergence.py --count [--llm openai --base-url URL] [--rounds N]

Each pair is a root's output in one round and the next, in the parts a strong model
writes (position, disagreements, agreements, inferences), on one of several subjects
(`group`): `same` (paraphrased, reordered, cosmetic edits: no material change) or
`changed` (a point added or dropped, a disagreement added, dropped or settled, an
agreement turned into a disagreement, a position or conclusion turned around, or hedged
until it claims much less). Printed: the no-change score of each pair
(engines/convergence.py: each sentence matched to its closest in the other output, the
worst match), then the split and what the threshold does on each half.

The split: the subjects in the order they first appear, alternately to the half that
chooses the threshold and the half that checks it, so no subject is in both. The rule,
on the choosing half: a debate stopped wrongly loses its later rounds, one that runs on
costs a round, so the threshold is the lowest (on a 0.01 grid) above every `changed`
pair that an embedding can see; a position or conclusion turned around, or hedged, in
nearly the same words (UNSEEN) is the change a sentence embedding does not see, and no
threshold below 1 tells it apart (in a question session the answer tally does). On the
checking half: the false-stop rate (`changed` pairs that score at or above it, all kinds,
and apart those an embedding can see and those it cannot) and the missed-stop rate
(`same` pairs that score below it), each with its Wilson 95% interval. The shipped
`convergence_threshold` is marked.

`--count` runs one session per example passage (examples/*.txt) with the settings
given and prints, per passage, the rounds its main debate ran and whether it
converged: the share of debates that stop early. It makes real model calls: run it on
a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagmca.config import SessionConfig
from dagmca.debate.engines.convergence import no_change_now
from dagmca.evaluation.stats import wilson
from dagmca.similarity.choose import DEFAULT, EmbedderName, make_embedder

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "convergence_pairs.jsonl"
EXAMPLES = ROOT / "examples"
# the changes in nearly the same words that a sentence embedding does not see
UNSEEN = frozenset({"position reversed", "conclusion turned", "hedged"})


@dataclass(frozen=True)
class Scored:
    group: str
    label: str  # same or changed
    kind: str
    score: float

    @property
    def unseen(self) -> bool:
        return self.label == "changed" and self.kind in UNSEEN


def scores(embedder: str = DEFAULT.value) -> list[Scored]:
    """Every labelled pair with its no-change score, with the embedder of that name."""
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    emb = make_embedder(embedder)
    try:
        return [
            Scored(r["group"], r["label"], r["kind"], no_change_now(emb, r["before"], r["after"]))
            for r in rows
        ]
    finally:
        emb.close()


def halves(found: list[Scored]) -> tuple[list[Scored], list[Scored]]:
    """(the half that chooses the threshold, the half that checks it): the subjects in
    the order they first appear, alternately."""
    groups = list(dict.fromkeys(s.group for s in found))
    choosing = set(groups[::2])
    return [s for s in found if s.group in choosing], [s for s in found if s.group not in choosing]


def choose(half: list[Scored]) -> float:
    """The lowest threshold on a 0.01 grid above every changed pair an embedding can see."""
    seen = [s.score for s in half if s.label == "changed" and not s.unseen]
    return round(math.floor(max(seen) * 100 + 1) / 100, 2) if seen else 0.5


def rate(hits: int, of: int) -> dict[str, Any]:
    lo, hi = wilson(hits, of)
    share = round(hits / of, 3) if of else None
    return {"hits": hits, "of": of, "rate": share, "lo": round(lo, 3), "hi": round(hi, 3)}


def rates(half: list[Scored], threshold: float) -> dict[str, Any]:
    """False stops (changed pairs at or above `threshold`: all, those an embedding can
    see, those it cannot) and missed stops (same pairs below it), with Wilson intervals."""
    changed = [s for s in half if s.label == "changed"]
    seen = [s for s in changed if not s.unseen]
    unseen = [s for s in changed if s.unseen]
    same = [s for s in half if s.label == "same"]
    return {
        "false_stops": rate(sum(s.score >= threshold for s in changed), len(changed)),
        "false_stops_seen": rate(sum(s.score >= threshold for s in seen), len(seen)),
        "false_stops_unseen": rate(sum(s.score >= threshold for s in unseen), len(unseen)),
        "missed_stops": rate(sum(s.score < threshold for s in same), len(same)),
    }


def out_of_sample(found: list[Scored]) -> dict[str, Any]:
    """The threshold chosen on one half, and what it does on the other (and, for
    comparison, on the half that chose it)."""
    choosing, checking = halves(found)
    threshold = choose(choosing)
    return {
        "pairs": len(found),
        "choosing": {"pairs": len(choosing), "groups": sorted({s.group for s in choosing})},
        "checking": {"pairs": len(checking), "groups": sorted({s.group for s in checking})},
        "threshold": threshold,
        "shipped": SessionConfig().convergence_threshold,
        "held_out": rates(checking, threshold),
        "in_sample": rates(choosing, threshold),
    }


def _line(name: str, r: dict[str, Any]) -> str:
    if not r["of"]:
        return f"  {name}: none"
    return f"  {name}: {r['hits']} of {r['of']} ({r['rate']:.0%}, 95% {r['lo']:.0%}-{r['hi']:.0%})"


def calibrate(embedder: str, as_json: bool = False) -> None:
    found = scores(embedder)
    result = out_of_sample(found)
    if as_json:
        print(json.dumps({"embedder": embedder, **result}, indent=2))
        return
    print(f"embedder: {embedder}")
    choosing, _ = halves(found)
    chooses = {s.group for s in choosing}
    for s in sorted(found, key=lambda x: x.score):
        half = "choose" if s.group in chooses else "check "
        print(f"  {s.score:.4f}  {half}  {s.label:8s} {s.kind:38s} {s.group}")
    mark = "  (shipped)" if abs(result["threshold"] - result["shipped"]) < 1e-9 else ""
    print(f"threshold chosen on {result['choosing']['pairs']} pairs: {result['threshold']:.2f}{mark}; "
          f"shipped {result['shipped']:.2f}")  # fmt: skip
    for name, half in (("held_out", "checking"), ("in_sample", "choosing")):
        r = result[name]
        print(f"{name.replace('_', '-')} ({result[half]['pairs']} pairs):")
        print(_line("false stops, every change", r["false_stops"]))
        print(_line("false stops, changes an embedding sees", r["false_stops_seen"]))
        print(_line("false stops, reversed or hedged in the same words", r["false_stops_unseen"]))
        print(_line("missed stops", r["missed_stops"]))


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
    parser.add_argument("--json", action="store_true", help="the split and its rates as JSON")
    args = parser.parse_args()
    if args.count:
        count(args.llm, args.base_url, args.rounds)
    else:
        calibrate(args.embedder, args.json)


if __name__ == "__main__":
    main()
