"""The swarm's model client in a workspace: the settings' backend behind one metered
client, so every agent of every router and repeat shares one gate, one rate limiter
and one budget, and every call is logged under the swarm's id and kept in the store's
response cache (a finished swarm run again asks nothing)."""

from __future__ import annotations

from dagmca.config import SessionConfig
from dagmca.llm.gate import Gate
from dagmca.llm.metered import Budget, MeteredLLM, Pool
from dagmca.workspace import BaseWorkspace, ClientLike


async def swarm_client(
    ws: BaseWorkspace, cfg: SessionConfig, swarm_id: str, client: ClientLike | None
) -> MeteredLLM:
    """The metered client. What earlier runs of the swarm spent counts against its
    budgets: a rerun's budget is the swarm's, not what is left of this run's."""
    backend = await ws.backend(cfg, client)
    store = ws.store
    pool = Pool(Budget.of(cfg))
    pool.charge(await store.aread(lambda s: s.calls(swarm_id)))
    return MeteredLLM.for_session(
        cfg, backend.client, calls=store, session=swarm_id, gate=Gate(cfg.concurrency), pool=pool
    )
