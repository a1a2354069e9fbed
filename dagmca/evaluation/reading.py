"""A session of an eval read back as its record: its answer scored, what its final
answer's claims are by origin and what it cites, and what it spent by what made the
requests: the arm's own calls (which size a matched vote), the emergence ledger's, and
none of its ledger's controls (a lone agent's answer traced against a debate's sources
is recorded under the lone agent's session, and counted as the control's)."""

from __future__ import annotations

from collections import Counter

from dagmca.debate.ledger.control import CONTROL
from dagmca.evaluation.arms import Arm
from dagmca.evaluation.graph import final_id
from dagmca.evaluation.length import words
from dagmca.evaluation.pairs import Finished
from dagmca.evaluation.records import Cited, RunRecord
from dagmca.evaluation.scoring import score
from dagmca.evaluation.tasks import Task
from dagmca.graph import CallPhase, CallRecord, ClaimOrigin, FinalNode, node_from_record
from dagmca.graph.calls import prompt_tokens, spent
from dagmca.metrics.citations import citations
from dagmca.metrics.ledger import final_claims, shares
from dagmca.store.base import GraphStore


def is_control(call: CallRecord, session: str) -> bool:
    """A call of a control traced under `session` (the lone agent's): its text is
    `SESSION/control/AGAINST`."""
    return call.debate.startswith(f"{session}/{CONTROL}/")


def read_run(
    store: GraphStore, arm: Arm, protocol: str, task: Task, repeat: int, sid: str, tol: float
) -> Finished:
    """Session `sid`'s record as `arm`'s on (task, repeat), and its final text."""
    node = store.get_node(sid)
    status = str(node.props.get("status", "")) if node is not None else "missing"
    final_record = store.get_node(final_id(sid))
    final = node_from_record(final_record) if final_record is not None else None
    final = final if isinstance(final, FinalNode) else None
    answer = final.answer if final is not None else None
    text = final.text if final is not None else None
    # the requests made (a resumed session's replies replayed from the cache cost nothing
    # and were counted when they were first asked); the ledger's apart from the arm's,
    # which a matched vote arm is sized from
    made = [c for c in store.calls(sid) if not is_control(c, sid)]
    own = [c for c in made if c.phase != CallPhase.LEDGER]
    calls, tokens, cost = spent(own)
    ledger = spent([c for c in made if c.phase == CallPhase.LEDGER])
    claims = final_claims(store, sid)
    traced = shares(claims)
    count = Counter(c.origin.value for c in claims)
    cited = citations(final)
    record = RunRecord(
        arm=arm.name, protocol=protocol, task=task.id, repeat=repeat, session=sid, status=status,
        answer=answer, score=score(task, answer, tol), calls=calls, tokens=tokens, cost_usd=cost,
        prompt_tokens=prompt_tokens(own),
        ledger_calls=ledger[0], ledger_tokens=ledger[1], ledger_cost_usd=ledger[2],
        origins={o.value: count[o.value] for o in ClaimOrigin} if claims else {},
        untraced=traced.untraced if traced else 0, words=words(text),
        citations=Cited(cited.claims, cited.cited, cited.removed) if cited is not None else None,
    )  # fmt: skip
    return Finished(record, text)
