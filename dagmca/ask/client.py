"""Asking with settings, as the CLI does: the store on its own thread, retrieval first,
and only when there is something to answer from, the backend the settings name (a local
model server is not started for nothing), behind the metered client a run uses.

The call goes through the response cache, so asking the same question of the same
retrieval again is answered from it, with no new call. It is recorded in the call log
under a session id of its own, `ask-<UTC time>`, which no Session node has: a question
is not a session, but its cost is accounted where every other call's is."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from dagmca.ask.asking import Retrieval, answer, retrieve
from dagmca.ask.corpus import Sessions
from dagmca.ask.models import Answer
from dagmca.ask.retrieval import RetrievalSettings
from dagmca.config import SessionConfig
from dagmca.errors import EndpointError
from dagmca.graph import ModelRole
from dagmca.llm.base import EndpointDown, LLMClient
from dagmca.llm.factory import context_window, open_backend, role_models
from dagmca.llm.metered import MeteredLLM
from dagmca.llm.tokens import TokenCounter
from dagmca.prompts.budget import PromptBudget
from dagmca.similarity import Embedder
from dagmca.store.background import BackgroundStore
from dagmca.store.base import GraphStore

ASK_PREFIX = "ask-"  # the call log's session ids of asks


def ask_session_id() -> str:
    return ASK_PREFIX + datetime.now(UTC).strftime("%Y%m%d-%H%M%S-%f")


async def ask_with_settings(
    cfg: SessionConfig,
    store: GraphStore,
    question: str,
    *,
    embedder: Embedder,
    sessions: Sessions = None,
    retrieve_only: bool = False,
    settings: RetrievalSettings | None = None,
) -> Answer:
    """Retrieve from `store`; unless `retrieve_only` or nothing was found, answer with
    the `final` role's model of `cfg`. Every write (the index, the call record, the
    cached reply) is in the store when this returns."""
    background = BackgroundStore(store)
    try:
        found = await retrieve(background, question, embedder=embedder, sessions=sessions, settings=settings)
        if retrieve_only or not found.hits:
            return found.as_answer()
        return await answer_with_settings(cfg, background, found)
    finally:
        try:
            await background.flush()
        finally:
            background.close()


async def answer_with_settings(cfg: SessionConfig, background: BackgroundStore, found: Retrieval) -> Answer:
    """The answer to what `found` retrieved, by the `final` role's model of `cfg`, on a
    backend opened for this answer and stopped after it (the CLI's one ask; a workspace
    asks on its own backends, `answer_with_client`)."""
    # starting a local model server waits for it to load: off the loop
    backend = await asyncio.to_thread(open_backend, cfg)
    try:
        try:
            return await answer_with_client(cfg, background, found, backend.client)
        finally:
            await backend.client.aclose()
    finally:
        backend.stop()


async def answer_with_client(
    cfg: SessionConfig, background: BackgroundStore, found: Retrieval, client: LLMClient
) -> Answer:
    """The answer to what `found` retrieved, by the `final` role's model of `cfg` on
    `client`, which stays open: it is the caller's (a workspace's backend, shared by its
    sessions and asks, so that asking again starts no second model server)."""
    final = cfg.role(ModelRole.FINAL)
    llm = MeteredLLM.for_session(cfg, client, calls=background, session=ask_session_id())
    try:
        await llm.ping()
        window = context_window(final, client).tokens
        budget = PromptBudget(counter=TokenCounter(), window=window, turn=0, flag=0, synthesis=0, final=0)
        result = await answer(found, llm, budget=budget, max_tokens=final.final_tokens(), seed=final.seed)
    except EndpointDown as exc:
        raise EndpointError(str(exc), "check the endpoint, then ask again") from None
    played = role_models(cfg, client.model)[ModelRole.FINAL]
    return result.model_copy(update={"model": played}) if result.model else result
