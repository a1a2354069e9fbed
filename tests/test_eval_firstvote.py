"""`first-vote`: the plurality of the debate's own first-round answers, read from the
session the mca arm already ran, at no call (Choi et al. 2025)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from dagmca.cli.app import app
from dagmca.evaluation import Task
from dagmca.graph import NodeKind
from dagmca.store import open_store
from tests.support.evals import EVAL, run, scripted


def _tally_first_rounds(db: Path, tallies: dict[str, dict[str, int]], arm: str = "mca") -> None:
    """Each mca session's main debate's first round stores its task's tally, as the
    engine stores its agents' answer lines (the scripted turns: two of three right)."""
    with open_store(str(db)) as st:
        for s in st.sessions():
            task = s.id.removeprefix(f"{EVAL}-{arm}-").rpartition("-r")[0]
            if not s.id.startswith(f"{EVAL}-{arm}-") or task not in tallies:
                continue
            tally = tallies[task]
            rounds = [n for n in st.nodes(s.id, NodeKind.ROUND) if n.props.get("debate") == f"{s.id}/main"]
            first = min(rounds, key=lambda n: int(str(n.props["number"])))
            props = {**first.props, "answers": json.dumps(tally)}
            st.write(nodes=[first.model_copy(update={"props": props})])


def test_first_vote_reads_round_one_at_no_call_and_beats_a_debate_that_ends_wrong(tmp_path: Path) -> None:
    found = [Task(id=f"t{i}", question=f"What is {i} + {i}?", answer=str(2 * i)) for i in range(1, 7)]
    wrong = scripted(lambda a, t, r: "-1")  # the debate's final answer is wrong on every task
    run(tmp_path, wrong, found, "mca")
    made = len(wrong.calls)
    # two of three agents start right on each task
    _tally_first_rounds(tmp_path / "e.db", {t.id: {str(t.answer): 2, "-1": 1} for t in found})
    report, _ = run(tmp_path, wrong, found, "mca,first-vote")
    assert len(wrong.calls) == made  # first-vote made no call, and mca was read, not run
    mca, first = report.arms
    assert first.arm == "first-vote" and first.calls == 0 and first.protocol == "first-vote"
    assert first.accuracy is not None and first.accuracy.value == 1.0
    assert mca.accuracy is not None and mca.accuracy.value == 0.0
    (c,) = report.comparisons
    assert (c.arm, c.baseline, c.wins, c.losses) == ("mca", "first-vote", 0, 6)


def test_first_vote_is_among_the_json_arms_with_zero_calls_and_an_accuracy(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"id": "t1", "question": "What is 2+2?", "answer": "4"}\n', encoding="utf-8")
    args = ["eval", str(path), "--arms", "mca,first-vote", "--llm", "fake", "--store", str(tmp_path / "c.db")]
    done = CliRunner().invoke(app, [*args, "--json"])
    assert done.exit_code == 0, done.output
    arms = {a["arm"]: a for a in json.loads(done.stdout)["arms"]}
    assert arms["first-vote"]["calls"] == 0 and arms["first-vote"]["accuracy"]["scored"] == 1
