"""The swarm's model client in a workspace: the settings' backend behind one metered
client, so every agent of every router and repeat shares one gate, one rate limiter
and one budget, and every call is logged under the swarm's id and kept in the store's
response cache (a finished swarm run again asks nothing)."""

from __future__ import annotations

from dagmca.config import SessionConfig
from dagmca.llm.gate import Gate
from dagmca.llm.metered import Budget, MeteredLLM, Pool, role_terms
from dagmca.workspace import BaseWorkspace, ClientLike


async def swarm_client(
    ws: BaseWorkspace, cfg: SessionConfig, swarm_id: str, client: ClientLike | None
) -> MeteredLLM:
    backend = await ws.backend(cfg, client)
    store = ws.store
    return MeteredLLM(
        backend.client,
        concurrency=cfg.concurrency,
        terms=role_terms(cfg, backend.client),
        cache=store,
        read_cache=cfg.cache,
        record=lambda call: store.record_calls([call]),
        session=swarm_id,
        down_after=cfg.endpoint_down_after,
        gate=Gate(cfg.concurrency),
        pool=Pool(Budget(cfg.max_llm_calls, cfg.max_tokens, cfg.max_cost_usd)),
    )
