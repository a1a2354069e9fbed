"""What keeps a session to one writer: its lease (`dagmca.store.lease`), held and
renewed while a run, resume, revisit or ledger works on it, and what a run told to use
an existing session's id must agree with before it continues that session."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from dagmca.config import SessionConfig
from dagmca.errors import DagmcaError, UserError
from dagmca.graph import NodeRecord
from dagmca.store.background import BackgroundStore
from dagmca.store.lease import acquire, holder_id, renewing
from dagmca.workspace.inputs import BUDGETS
from dagmca.workspace.stored import stored_config

FINISHED = ("done", "degraded")  # the sessions `revisit` takes: their run ended
# settings that change how a run is carried out but no answer in it: an existing
# session is continued whatever they are, with the values given now
RUNTIME = frozenset(
    {
        "concurrency",
        "rpm",
        "tpm",
        "request_timeout_s",
        "max_retries",
        "endpoint_down_after",
        "cache",
        "otel",
        "otel_content",
        "max_passage_bytes",
        "price_per_1k_prompt",
        "price_per_1k_completion",
        *BUDGETS,
    }
)


@contextlib.asynccontextmanager
async def held(store: BackgroundStore, session: str) -> AsyncIterator[None]:
    """The session's lease for this process while the block runs, renewed as it goes;
    SessionBusy (nothing done) when another live process holds it. A renewal the store
    fails is tried again; when the lease is lost (another holder has it, or it expired
    unrenewed) the block is cancelled and the loss raised, SessionBusy or StoreError, a
    one-line error. It is given up after every write queued inside has reached the store."""
    holder = holder_id()
    await store.aread(lambda s: acquire(s, session, holder))
    owner = asyncio.current_task()
    assert owner is not None
    lost: list[DagmcaError] = []

    def stop(exc: DagmcaError) -> None:  # lost: the block stops writing, the loss is raised
        lost.append(exc)
        owner.cancel()

    renewal = renewing(store, session, holder, stop)
    try:
        yield
    except asyncio.CancelledError:
        if lost and owner.uncancel() == 0:
            raise lost[0] from None
        raise
    finally:
        renewal.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await renewal
        with contextlib.suppress(Exception):  # its expiry frees it anyway
            await store.aread(lambda s: s.release(session, holder))


def finished(node: NodeRecord) -> None:
    """Refused unless the session's run ended (`revisit` explores its open stubs: in a
    half-made DAG that would break it)."""
    status = str(node.props.get("status", ""))
    if status not in FINISHED:
        raise UserError(
            f"session {node.id} is not finished ({status})", f"`dagmca resume {node.id}` finishes it first"
        )


def continuable(node: NodeRecord, cfg: SessionConfig, asked: tuple[str, str | None], location: str) -> None:
    """A run given an existing session's id continues that session only when these
    settings made it from this input, and it is not done; else refused, saying what differs."""
    found = (str(node.props.get("passage", "")), str(node.props.get("question") or "") or None)
    said = differences(stored_config(node), cfg, found, asked)
    if said:
        raise UserError(
            f"session {node.id} already exists in {location} with other settings: {'; '.join(said)}",
            f"`dagmca resume {node.id}` continues it with its own settings, or choose another id",
        )
    if str(node.props.get("status", "")) == "done":
        raise UserError(f"session {node.id} already exists in {location} and is done", "choose another id")


def differences(
    stored: SessionConfig,
    given: SessionConfig,
    found: tuple[str, str | None],
    asked: tuple[str, str | None],
) -> list[str]:
    """What a run given `given` on (passage, question) `asked` would do otherwise than
    the session that ran `stored` on `found`: each difference as `name: here, there`."""
    said = []
    if found[0] != asked[0]:
        said.append("the passage")
    if (found[1] or None) != (asked[1] or None):
        said.append("the question")
    mine, theirs = given.model_dump(mode="json"), stored.model_dump(mode="json")
    for name in SessionConfig.model_fields:
        if name not in RUNTIME and mine.get(name) != theirs.get(name):
            said.append(f"{name} {_short(mine.get(name))} (the session's: {_short(theirs.get(name))})")
    return said


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
