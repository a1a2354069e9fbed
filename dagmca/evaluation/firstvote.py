"""`first-vote`: the plurality of a debate's own first-round answers (Choi et al. 2025:
does the debate beat the vote of its agents' first answers?). It is read from the
session its source arm already ran, the tally the main debate's first round stores
(`Round.answers`, JSON of answer to count), so it costs no call."""

from __future__ import annotations

import json

from dagmca.evaluation.consistency import plurality
from dagmca.evaluation.pairs import Finished
from dagmca.evaluation.records import RunRecord
from dagmca.evaluation.scoring import score
from dagmca.evaluation.tasks import Task
from dagmca.graph import NodeKind
from dagmca.store.base import GraphStore


def first_answers(store: GraphStore, session: str) -> list[str]:
    """The answers of the main debate's first round that stored a tally, each as many
    times as it was given; empty when no round did (a session that was not a question
    session, or was stopped before its first round ended)."""
    main = f"{session}/main"
    rounds = [
        n
        for n in store.nodes(session, NodeKind.ROUND)
        if n.props.get("debate") == main and n.props.get("answers")
    ]
    if not rounds:
        return []
    first = min(rounds, key=lambda n: int(str(n.props.get("number", 0))))
    try:
        tally = json.loads(str(first.props["answers"]))
    except json.JSONDecodeError:
        return []
    if not isinstance(tally, dict):
        return []
    return [str(answer) for answer, count in tally.items() for _ in range(max(0, int(count)))]


def first_vote(
    arm: str, task: Task, repeat: int, source: RunRecord, answers: list[str], tolerance: float
) -> Finished:
    """The arm's record: the plurality of `answers`, scored, at no call; its session is
    the source's (whose first round it read)."""
    pick = plurality(task, list(answers), tolerance)
    answer = answers[pick] if pick is not None else None
    record = RunRecord(
        arm=arm, protocol="first-vote", task=task.id, repeat=repeat, session=source.session,
        status=source.status, answer=answer, score=score(task, answer, tolerance),
        calls=0, tokens=0, cost_usd=0.0, samples=0,
    )  # fmt: skip
    return Finished(record, None)
