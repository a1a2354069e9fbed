"""The ledger's controls in an eval: for each traced arm, task and repeat, the `single`
arm's final answer traced against the sources of that arm's session (its passage and
its debate's texts), which the lone agent never read, by the same procedure and ledger
settings as the arm's own final (`dagmca.workspace.control_ledger`).

Its calls go through the eval's backend, gate and spend, so they count against the
eval's limits and budgets; they are recorded under the lone agent's session (as its
text `SESSION/control/AGAINST`) and counted as the control's, not as that arm's. Each
control's result is kept in the Evaluation's summary: tracing opens the lone agent's
session, which asks its endpoint, so a rerun reads it back instead and a finished eval
run again asks nothing. One cut short is traced again, its finished calls replayed from
the response cache."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Mapping

from pydantic import ValidationError

from dagmca.debate.ledger.control import control_id
from dagmca.evaluation.arms import Arm
from dagmca.evaluation.origins import ControlRow
from dagmca.evaluation.pairs import Finished
from dagmca.evaluation.plan import control_settings
from dagmca.evaluation.sessions import EvalSessions
from dagmca.evaluation.tasks import Task
from dagmca.graph import ClaimOrigin, EvaluationNode, NodeRecord, node_from_record
from dagmca.graph.calls import spent
from dagmca.llm.stack.base import BudgetExhausted
from dagmca.workspace import BaseWorkspace as Workspace
from dagmca.workspace import control_ledger
from dagmca.workspace.stored import stored_config

Key = tuple[str, str]  # (the lone agent's session, the session whose sources)


def stored_controls(old: NodeRecord | None) -> dict[Key, ControlRow]:
    """The controls an earlier run of the eval traced whole (nothing left untraced), from
    its Evaluation's summary."""
    node = node_from_record(old) if old is not None else None
    if not isinstance(node, EvaluationNode):
        return {}
    try:
        rows = json.loads(node.summary).get("controls") or []
    except (json.JSONDecodeError, AttributeError):
        return {}
    found: dict[Key, ControlRow] = {}
    for raw in rows:
        try:
            row = ControlRow.model_validate(raw)
        except ValidationError:
            continue
        if not row.untraced:
            found[(row.session, row.against)] = row
    return found


class Controls:
    """Traces (or reads back) the controls of an eval: `stored` those an earlier run
    traced, `limit` the eval's sessions at once (a control opens the lone agent's)."""

    def __init__(
        self,
        ws: Workspace,
        sessions: EvalSessions,
        stored: Mapping[Key, ControlRow],
        limit: asyncio.Semaphore,
    ) -> None:
        self.ws, self.sessions, self.stored, self.limit = ws, sessions, stored, limit
        self.rows: list[ControlRow] = []
        self.skipped = 0  # controls not traced for the budget: a rerun with a raised one traces them

    async def trace(
        self, arm: Arm, task: Task, repeat: int, debate: Finished | None, lone: Finished | None
    ) -> None:
        """The control of `arm`'s session on (task, repeat): `lone`'s final answer
        against `debate`'s sources. Nothing to do when either was not run, the debate's
        final was not traced, or the lone agent has no final answer."""
        if debate is None or lone is None or not debate.record.origins or lone.final_text is None:
            return
        session, against = lone.record.session, debate.record.session
        row = self.stored.get((session, against))
        if row is None:
            if self.sessions.spent_out():
                self.skipped += 1
                return
            async with self.limit:
                row = await self._traced(arm.name, task.id, repeat, session, against)
            if row is None:
                self.skipped += 1
                return
        self.rows.append(row)

    async def _traced(
        self, arm: str, task: str, repeat: int, session: str, against: str
    ) -> ControlRow | None:
        store = self.ws.store
        lone = await store.aread(lambda s: s.get_node(session))
        traced = await store.aread(lambda s: s.get_node(against))
        assert lone is not None and traced is not None  # both sessions just ran, or were read
        cfg = control_settings(stored_config(lone), stored_config(traced))
        try:
            found = await control_ledger(
                self.ws, session, against, settings=cfg, backend=await self.sessions.backend(cfg),
                shared=self.sessions.shared,
            )  # fmt: skip
        except BudgetExhausted:
            return None
        if not found.claims and found.untraced:  # not even split: a rerun tries again
            return None
        await store.flush()
        text = control_id(session, against)
        made = await store.aread(lambda s: s.calls(session))
        calls, tokens, cost = spent([c for c in made if c.debate == text])
        count = Counter(c.origin.value for c in found.claims)
        return ControlRow(
            arm=arm, task=task, repeat=repeat, session=session, against=against,
            origins={o.value: count[o.value] for o in ClaimOrigin}, untraced=found.untraced,
            calls=calls, tokens=tokens, cost_usd=round(cost, 6),
        )  # fmt: skip
