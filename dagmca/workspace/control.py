"""The ledger's control in a workspace: a finished session's final answer (a lone
agent's: an evaluation's `single` arm) traced against another session's passage and
texts (the same task's debate), as that debate's own final is traced; nothing is
written but the calls, which the lone agent's session records and counts."""

from __future__ import annotations

from dagmca.config import SessionConfig
from dagmca.debate.ledger import ControlTrace
from dagmca.debate.session import control_session
from dagmca.errors import UserError
from dagmca.llm.factory import Backend
from dagmca.store import require_session
from dagmca.workspace.backends import ClientLike, Handed
from dagmca.workspace.core import BaseWorkspace
from dagmca.workspace.session import SessionMode, SharedResources
from dagmca.workspace.stored import stored_config


async def control_ledger(
    ws: BaseWorkspace,
    session: str,
    against: str,
    *,
    settings: SessionConfig | None = None,
    client: ClientLike | None = None,
    backend: Backend | Handed | None = None,
    shared: SharedResources | None = None,
) -> ControlTrace:
    """Session `session`'s final traced against session `against`'s passage and texts,
    with `session`'s own settings (the ledger's prefilter, candidates and claims; a
    session run with the ledger off traced as `final`), or `settings`. `backend` and
    `shared`: an evaluation's, so the calls count against its limits and budget. The
    ControlTrace gives the claims, how many were left untraced, and their shares."""
    store = ws.store
    node = await store.aread(lambda s: require_session(s, session))
    await store.aread(lambda s: require_session(s, against))
    cfg = settings or stored_config(node)
    if cfg.ledger_mode() == "off":  # the control is asked for, whatever the run said
        cfg = cfg.model_copy(update={"ledger": "final"})
    asked = str(node.props["question"]) if node.props.get("question") else None
    opened = ws.open_session(
        cfg,
        session_id=session,
        passage=str(node.props["passage"]),
        question=asked,
        mode=SessionMode.REVISIT,
        client=client,
        backend=backend,
        shared=shared,
    )
    async with opened as s:
        if await store.aread(lambda st: st.get_node(f"{session}/final")) is None:
            raise UserError(f"session {session} has no final answer to trace", f"`dagmca resume {session}`")
        return await control_session(s.state, against)
