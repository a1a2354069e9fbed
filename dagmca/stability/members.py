"""What a study aligns, read from the store: each session's tensions, the claims of its
final answer (the ledger's) and, in a question session, its short answer. Sessions of
different passages (or questions) are refused: they are not samples of one thing.

A tension judged within its session to ask what an earlier one asks (`duplicate`) is
left out: its twin stands for it. A session whose final answer was not traced has no
claims to align: it counts in no claim finding's `n`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from dagmca.errors import UserError
from dagmca.graph import FindingKind, NodeKind, NodeRecord, SessionStatus, TensionStatus
from dagmca.metrics.ledger import final_claims
from dagmca.store import require_session
from dagmca.store.base import GraphStore


@dataclass(frozen=True)
class Member:
    """One session's tension, claim or answer, as the judge reads it."""

    id: str
    session: str
    kind: FindingKind
    text: str
    origin: str = ""  # a claim's origin in its session's ledger


@dataclass
class Sample:
    """One session of a study, and what it holds to align. `claims` is None when its
    final answer was not traced; `answer` when it gave no short answer (or asked none)."""

    session: str
    model: str
    question: str | None
    tensions: list[Member] = field(default_factory=list)
    claims: list[Member] | None = None
    answer: Member | None = None

    def of(self, kind: FindingKind) -> list[Member] | None:
        """Its members of `kind`; None when it has nothing of that kind to align (not
        traced, or not a question session)."""
        if kind is FindingKind.TENSION:
            return self.tensions
        if kind is FindingKind.CLAIM:
            return self.claims
        if self.question is None:
            return None
        return [self.answer] if self.answer is not None else []


def read_samples(store: GraphStore, sessions: Sequence[str]) -> list[Sample]:
    """The sessions' samples, in the order given. Refused (a UserError, nothing read
    further) for fewer than two distinct sessions, an unknown or unfinished one, or
    sessions of different passages or questions."""
    if len(set(sessions)) != len(sessions):
        raise UserError("a session is named twice", "name each session once")
    if len(sessions) < 2:
        raise UserError("stability needs two or more sessions of one passage", "name two or more sessions")
    nodes = [require_session(store, s) for s in sessions]
    _one_passage(nodes)
    for node in nodes:
        status = SessionStatus.of(node)
        if not status.ended():
            raise UserError(
                f"session {node.id} is not finished ({status}): a sample cut short would count as one that "
                "found less",
                f"`dagmca resume {node.id}` finishes it",
            )
    return [_sample(store, node) for node in nodes]


def _one_passage(nodes: Sequence[NodeRecord]) -> None:
    first = nodes[0]
    for node in nodes[1:]:
        if node.props.get("passage_sha256") != first.props.get("passage_sha256"):
            raise UserError(
                f"sessions {first.id} and {node.id} debate different passages; stability compares "
                "samples of one passage",
                "name sessions of the same passage",
            )
        if (node.props.get("question") or None) != (first.props.get("question") or None):
            raise UserError(
                f"sessions {first.id} and {node.id} ask different questions of the passage",
                "name sessions of the same passage and question",
            )


def _sample(store: GraphStore, node: NodeRecord) -> Sample:
    session = node.id
    records = store.nodes(session)
    question = str(node.props.get("question") or "") or None
    tensions = sorted(
        (
            Member(r.id, session, FindingKind.TENSION, str(r.props.get("question", "")))
            for r in records
            if r.kind is NodeKind.TENSION and r.props.get("status") != TensionStatus.DUPLICATE.value
        ),
        key=lambda m: m.id,
    )
    traced = sorted(final_claims(store, session, records), key=lambda c: c.number)
    claims = [Member(c.id, session, FindingKind.CLAIM, c.text, c.origin.value) for c in traced] or None
    final = next((r for r in records if r.kind is NodeKind.FINAL), None)
    said = str(final.props.get("answer") or "").strip() if final is not None else ""
    answer = Member(final.id, session, FindingKind.ANSWER, said) if final is not None and said else None
    return Sample(session, str(node.props.get("model", "")), question, tensions, claims, answer)
