"""The verbs that reopen a stored session, for `BaseWorkspace`: `resume` finishes one
cut short, `revisit` explores a finished one's open stubs against new context, `ledger`
traces its claims. Each runs with the session's own settings and the caller's overrides
(a moved endpoint, a raised budget), and refuses, with one error that names what to
change, a session that cannot be taken up so."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Unpack

from dagmca.config import SessionConfig
from dagmca.config.overrides import Overrides
from dagmca.debate.events import EventSink
from dagmca.debate.session import SessionResult, ledger_session
from dagmca.errors import UserError
from dagmca.graph import NodeRecord, SessionStatus
from dagmca.passage import check_text
from dagmca.store import require_session
from dagmca.workspace.backends import ClientLike
from dagmca.workspace.inputs import BUDGETS, settings_from, spend_of
from dagmca.workspace.opening import Opening
from dagmca.workspace.results import LedgerReport, RevisitResult, RunResult
from dagmca.workspace.session import OpenSession, SessionMode, revisit_and_report, run_and_report
from dagmca.workspace.stored import stored_config

BUDGET_FIX = (
    "raise a budget: --max-llm-calls, --max-tokens or --max-cost-usd (in the Python API, max_llm_calls, "
    "max_tokens or max_cost_usd)"
)


class Reopening(Opening):
    """The verbs of `BaseWorkspace` that reopen a stored session."""

    async def resume(
        self,
        session: str,
        *,
        client: ClientLike | None = None,
        events: EventSink | None = None,
        out_dir: str | Path | None = None,
        **overrides: Unpack[Overrides],
    ) -> RunResult:
        """Finish a session that was killed, interrupted or stopped: finished calls are
        replayed from the cache, the rest asked. `overrides` may move the endpoint or
        raise a budget; a session that spent its budget needs a raised one."""
        node, cfg = await self._stored(session, overrides)
        return await self._resume(node, cfg, client, events, out_dir)

    async def _resume(
        self,
        node: NodeRecord,
        cfg: SessionConfig,
        client: ClientLike | None,
        events: EventSink | None,
        out_dir: str | Path | None,
    ) -> RunResult:
        session = node.id
        text, title = str(node.props["passage"]), str(node.props.get("title", session))
        asked = str(node.props["question"]) if node.props.get("question") else None
        folder = Path(out_dir) if out_dir is not None else self.reports_dir(session)

        mode = SessionMode.RESUME
        opened = self.open_session(
            cfg, session_id=session, passage=text, question=asked, mode=mode, client=client, events=events
        )
        async with opened as s:
            result = await run_and_report(s.state, title=title, model=s.model, out_dir=folder)
            return self._result(result, s, folder)

    async def revisit(
        self,
        session: str,
        *,
        passage: str | None = None,
        client: ClientLike | None = None,
        events: EventSink | None = None,
        out_dir: str | Path | None = None,
        **overrides: Unpack[Overrides],
    ) -> RevisitResult:
        """Judge a finished session's open stubs against new context (`passage`, else
        its own final answer), explore the relevant ones and integrate again. A session
        whose run did not end, or ended with its budget spent, is refused: exploring its
        stubs in a half-made DAG would break it."""
        node, cfg = await self._stored(session, overrides)
        new_text = check_text(passage, cfg.max_passage_bytes) if passage is not None else None
        folder = Path(out_dir) if out_dir is not None else self.reports_dir(session)
        asked = str(node.props["question"]) if node.props.get("question") else None

        text = new_text or str(node.props["passage"])
        opened = self.open_session(
            cfg,
            session_id=session,
            passage=text,
            question=asked,
            mode=SessionMode.REVISIT,
            client=client,
            events=events,
            reopens=SessionStatus.revisitable,
        )
        async with opened as s:
            final = await self.store.aread(lambda st: st.get_node(f"{session}/final"))
            context = new_text or (str(final.props.get("text", "")) if final else "")
            if not context:
                raise UserError(f"session {session} has no final answer to revisit against", "pass a passage")
            r = await revisit_and_report(s.state, context=context, out_dir=folder)
            spend = spend_of(s.state.handles.llm)
            return RevisitResult(session, r.checked, list(r.superseded), list(r.explored), r.final, spend)

    async def ledger(
        self,
        session: str,
        *,
        events: EventSink | None = None,
        client: ClientLike | None = None,
        **overrides: Unpack[Overrides],
    ) -> LedgerReport:
        """Trace a finished session's claims (the emergence ledger) with its own settings
        and `overrides` (a `ledger` mode, a raised budget): what is already traced is
        kept, the rest asked of the judge role. A session that ran with the ledger off is
        traced as `ledger="final"`."""
        node, cfg = await self._stored(session, overrides)
        if cfg.ledger_mode() == "off":  # asked for by this call, whatever the run said
            cfg = cfg.model_copy(update={"ledger": "final"})

        text = str(node.props["passage"])
        opened = self.open_session(
            cfg, session_id=session, passage=text, mode=SessionMode.REVISIT, client=client, events=events
        )
        async with opened as s:
            if await self.store.aread(lambda st: st.get_node(f"{session}/final")) is None:
                raise UserError(
                    f"session {session} has no final answer to trace",
                    f"`dagmca resume {session}` finishes it",
                )
            traced = await ledger_session(s.state)
            return await self._claims(session, traced.untraced, spend_of(s.state.handles.llm).calls)

    def _result(self, result: SessionResult, opened: OpenSession, out_dir: Path) -> RunResult:
        spend = spend_of(opened.state.handles.llm)
        problems = list(result.session.problems)
        return RunResult(result.session, result.final, spend, self.location, out_dir, problems)

    async def _stored(
        self, session: str, overrides: Mapping[str, object]
    ) -> tuple[NodeRecord, SessionConfig]:
        """The stored session and the settings it is reopened with: its own, with
        `overrides` on top; refused when it spent its budget and none is raised."""
        node = await self.store.aread(lambda s: require_session(s, session))
        stored = stored_config(node)
        given = {k: v for k, v in overrides.items() if v is not None}
        cfg = settings_from(stored, given)
        raised = any(k in given for k in BUDGETS)
        if SessionStatus.of(node) is SessionStatus.BUDGET_EXHAUSTED and not raised:
            raise UserError(
                f"session {node.id} ended with its budget spent; nothing more can be asked within it",
                BUDGET_FIX,
            )
        return node, cfg
