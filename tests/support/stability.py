"""Three scripted sessions of one passage with a known truth, for the stability tests:
their observers flag tensions of which two recur in all three sessions, one in two and
the rest once, worded differently each time, and one question (about national
governments) shares most of its words with a recurring one (local councils) but asks
another thing. The scripted judge of the alignment decides by the topic each question
was written for, as a real judge would decide on what the questions ask."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dagmca.graph import ClaimNode, ClaimOrigin, EdgeType, NodeKind, NodeRecord, edge
from dagmca.llm.fake import ScriptedCall
from dagmca.prompts.schemas import DuplicateVerdict, SameClaimVerdict
from dagmca.store.sqlite import SQLiteStore
from tests.support.judges import duplicate_questions
from tests.support.sessions import run_scripted, scripted

# each question and the topic it asks about
TOPIC = {
    "Is a flat charge fair to low wage workers?": "fairness",
    "Would drivers on low wages carry an unfair share of a flat charge?": "fairness",
    "Does a single flat fee treat poorly paid commuters unfairly?": "fairness",
    "Does traffic simply move to poorer neighbourhoods?": "displacement",
    "Would the charge push cars into the poorer districts around the zone?": "displacement",
    "Is congestion displaced onto low-income streets outside the boundary?": "displacement",
    "Can the revenue be protected from future local councils?": "revenue",
    "What stops a later council from spending the charge's income elsewhere?": "revenue",
    "Would shops in the centre lose suburban visitors?": "shops",
    "Are the predictions of public reaction reliable at all?": "predictions",
    "Can the revenue be protected from future national governments?": "national",
    "How would emergency services be charged?": "emergency",
}
SESSIONS = ("s1", "s2", "s3")
STUDY = "three"
FLAGS = {
    "s1": [
        "Is a flat charge fair to low wage workers?",
        "Does traffic simply move to poorer neighbourhoods?",
        "Can the revenue be protected from future local councils?",
        "Would shops in the centre lose suburban visitors?",
    ],
    "s2": [
        "Would drivers on low wages carry an unfair share of a flat charge?",
        "Would the charge push cars into the poorer districts around the zone?",
        "What stops a later council from spending the charge's income elsewhere?",
        "Are the predictions of public reaction reliable at all?",
    ],
    "s3": [
        "Does a single flat fee treat poorly paid commuters unfairly?",
        "Is congestion displaced onto low-income streets outside the boundary?",
        "Can the revenue be protected from future national governments?",
        "How would emergency services be charged?",
    ],
}
# the truth: how many sessions each topic recurs in
RECURS = {
    "fairness": 3,
    "displacement": 3,
    "revenue": 2,
    "shops": 1,
    "predictions": 1,
    "national": 1,
    "emergency": 1,
}
SMALL = {"depth": 1, "rounds": 1, "max_depth": 0, "ledger": "off"}


def run_three(store: SQLiteStore, out_dir: Path, **settings: Any) -> None:
    """The three sessions into `store`, each flagging its questions in its main debate."""
    for session in SESSIONS:
        run_scripted(store, out_dir, scripted(FLAGS[session]), session=session, **{**SMALL, **settings})


def aligned_three(store: SQLiteStore, out_dir: Path) -> None:
    """The three sessions into `store`, aligned by the topic judge into the findings of
    study STUDY (every pair of two sessions' tensions read)."""
    import asyncio

    from dagmca.api import Workspace
    from dagmca.llm.fake import ScriptedLLM
    from dagmca.similarity import HashingEmbedder

    run_three(store, out_dir)

    async def go() -> None:
        async with Workspace(store, embedder=HashingEmbedder()) as ws:
            judge = ScriptedLLM(alignment_judge())
            await ws.stability(
                list(SESSIONS), client=judge, study=STUDY, duplicate_prefilter=0.0, candidates=10
            )

    asyncio.run(go())


def by_topic(first: str, second: str) -> str:
    return "duplicate" if TOPIC[first] == TOPIC[second] else "distinct"


def flips(first: str, second: str) -> str:
    """A judge that favours the question shown first when it sorts first: every pair
    gets one verdict in one order and the other in the other."""
    return "duplicate" if first < second else "distinct"


def alignment_judge(rule: Callable[[str, str], str] = by_topic) -> Callable[[ScriptedCall], Any]:
    """The alignment's judge: two tensions by `rule` on (the question shown first, the
    other); two claims the same when their words are."""

    def respond(call: ScriptedCall) -> Any:
        if call.schema is DuplicateVerdict:
            first, second = duplicate_questions(call.prompt)
            verdict = rule(first, second)
            return {"verdict": verdict, "reason": f"scripted judge: {verdict} by what each asks"}
        if call.schema is SameClaimVerdict:
            first, second = duplicate_questions_of_claims(call.prompt)
            verdict = "same" if first == second else "different"
            return {"verdict": verdict, "reason": f"scripted judge: {verdict} by what each states"}
        raise AssertionError(f"the alignment asked something else: {call.schema}")

    return respond


def duplicate_questions_of_claims(prompt: str) -> tuple[str, str]:
    found = re.search(r"\nA: (.*)\nB: (.*)\nJudge whether they state the same thing", prompt)
    assert found, "not a same-claim prompt"
    return found.group(1), found.group(2)


def copied(template: Path, to: Path) -> SQLiteStore:
    """A store holding what `template` holds (its sessions), open at `to`."""
    with sqlite3.connect(template) as source, sqlite3.connect(to) as target:
        source.backup(target)
    store = SQLiteStore(to)
    store.init_schema()
    return store


def _rewritten(store: SQLiteStore, node_id: str, **props: Any) -> None:
    found = store.get_node(node_id)
    assert found is not None
    store.write([found.model_copy(update={"props": {**found.props, **props}})])


def traced(store: SQLiteStore, session: str, claims: list[str], origin: str = "single") -> None:
    """`claims` as the ledger's claims of the session's final answer."""
    final = store.nodes(session, NodeKind.FINAL)[0]
    digest = hashlib.sha256(str(final.props["text"]).encode()).hexdigest()
    nodes: list[NodeRecord] = []
    for number, text in enumerate(claims, 1):
        claim = ClaimNode(
            id=f"{final.id}/claim{number}", session=session, text=text, origin=ClaimOrigin(origin),
            reason=f"judged {origin}", stated_in=final.id, source_sha256=digest, number=number,
            of=len(claims),
        )  # fmt: skip
        nodes.append(claim.to_record())
    store.write(nodes, [edge(n.id, final.id, EdgeType.STATED_IN, session) for n in nodes])


def asked(store: SQLiteStore, session: str, question: str, answer: str) -> None:
    """The session as one that asked `question` and answered `answer`."""
    _rewritten(store, session, question=question)
    _rewritten(store, store.nodes(session, NodeKind.FINAL)[0].id, answer=answer)


def on_model(store: SQLiteStore, session: str, model: str) -> None:
    _rewritten(store, session, model=model)
