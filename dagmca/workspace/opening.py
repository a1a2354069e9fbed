"""The one way a workspace's session is opened, `open_session`: under the session's
lease (taken here, or a claim the caller holds, as a build does), after what is stored
under its id was checked against what it is opened for, around the session's state."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import cast

from dagmca.config import SessionConfig
from dagmca.debate.events import EventSink
from dagmca.debate.state import SessionState
from dagmca.errors import EndpointError, SessionDone, SessionNotFound, UserError
from dagmca.graph import NodeKind, NodeRecord, SessionStatus
from dagmca.llm.base import EndpointDown
from dagmca.llm.factory import Backend
from dagmca.store import require_session
from dagmca.store.lease import Claims, held
from dagmca.workspace.backends import Backends, ClientLike, Handed
from dagmca.workspace.reading import Reading
from dagmca.workspace.session import Display, OpenSession, SessionMode, SharedResources, session_state
from dagmca.workspace.stored import reports_dir

Reopens = Callable[[SessionStatus], bool]


def check_stored(
    mode: SessionMode, node: NodeRecord | None, session: str, location: str, reopens: Reopens | None = None
) -> None:
    """Refused unless what is stored under `session` is what a session opened in `mode`
    takes: nothing for NEW; for RESUME a session not done; for REVISIT one whose run
    ended; `reopens`, when given, says which statuses instead."""
    if mode is SessionMode.NEW:
        if node is not None:
            raise UserError(f"{session!r} already exists in {location}", "choose another id")
        return
    if node is None or node.kind is not NodeKind.SESSION:
        raise SessionNotFound(f"no session {session!r} in {location}", "see `dagmca sessions`")
    status = SessionStatus.of(node)
    if (reopens or _REOPENS[mode])(status):
        return
    if status is SessionStatus.DONE:
        raise SessionDone(session)
    raise UserError(
        f"session {session} is not finished ({status})", f"`dagmca resume {session}` finishes it first"
    )


_REOPENS: dict[SessionMode, Reopens] = {
    SessionMode.RESUME: SessionStatus.continuable,
    SessionMode.REVISIT: SessionStatus.ended,
}


class Opening(Reading):
    """The opening of sessions, for `BaseWorkspace`."""

    location: str
    _reports: Path | None
    _backends: Backends

    def reports_dir(self, session: str) -> Path:
        return (
            self._reports / session
            if self._reports is not None
            else reports_dir(self.location, session, None)
        )

    def lease(self, key: str) -> contextlib.AbstractAsyncContextManager[Claims]:
        """The lease on `key` for what the workspace writes beside sessions (a study's
        findings): one live process writes it at a time, as a session (SessionBusy,
        nothing written, when another holds it)."""
        return held(self._opened()[0], key)

    @contextlib.asynccontextmanager
    async def open_session(
        self,
        settings: SessionConfig,
        *,
        session_id: str,
        passage: str,
        question: str | None = None,
        mode: SessionMode = SessionMode.NEW,
        client: ClientLike | None = None,
        backend: Backend | Handed | None = None,
        shared: SharedResources | None = None,
        events: EventSink | None = None,
        fix_when_down: str | None = None,
        lease: Claims | None = None,
        reopens: Reopens | None = None,
    ) -> AsyncIterator[OpenSession]:
        """One session of this workspace, ready to run: what `run`, `resume`, `revisit`,
        `ledger`, a build and an eval each do inside it. The session's lease is taken
        first and held until it closes (SessionBusy, nothing done, when another live
        process writes it), unless the caller's `lease` (claims it holds, as a build's
        on its passage or on the right to link) covers the session. Under it, what is
        stored under `session_id` must be what `mode` opens (`check_stored`; `reopens`:
        which statuses, instead of the mode's). `backend`: one the caller already has
        (else the workspace's for `settings`, or `client` wrapped); `shared`: the
        concurrency limit and spend of the group it runs in (a build's, an eval's; else
        its own). An endpoint that goes down is an `EndpointError` whose fix is
        `fix_when_down` (default: resume the session); every finished turn is kept
        either way."""
        background, embedder = self._opened()
        async with held(background, session_id) if lease is None else contextlib.nullcontext():
            stored = await background.aread(
                lambda s: (
                    require_session(s, session_id) if mode is not SessionMode.NEW else s.get_node(session_id)
                )
            )
            check_stored(mode, stored, session_id, self.location, reopens)
            backend = backend or await self._backends.get(settings, client)
            state = session_state(
                settings,
                client=backend.client,
                session_id=session_id,
                passage=passage,
                embedder=embedder,
                shared=shared or SharedResources.alone(background, settings),
                mode=mode,
                events=events,
                question=question,
            )
            try:
                async with state as ready:
                    with _displayed(events, ready):
                        yield OpenSession(ready, backend.model)
            except EndpointDown as exc:
                resume = f"`dagmca resume {session_id} --store {self.location}`"
                raise EndpointError(
                    str(exc), fix_when_down or f"every finished turn is kept; {resume} goes on"
                ) from None


@contextlib.contextmanager
def _displayed(events: EventSink | None, state: SessionState) -> Iterator[None]:
    """A live view (the CLI's progress), which also reads the meter between events,
    shown while the block runs."""
    live = callable(getattr(events, "start", None)) and callable(getattr(events, "stop", None))
    display = cast(Display, events) if live else None
    if display is not None:
        display.start(state.handles.llm.meter)
    try:
        yield
    finally:
        if display is not None:
            display.stop()
