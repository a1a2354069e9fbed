"""An evaluation's sessions under one set of limits: every arm, task and repeat, and
the judge, share one concurrency gate, one rate limiter per endpoint and one spend
against the eval's budgets, as the sessions of a `build` do. Each session alone would
otherwise be let in at the full concurrency and budget, and an eval of many sessions
run at once would send many times the requests its settings allow.

The backend is shared across seeds: the seed reaches each request with the call
itself, so two repeats need no backend (and no rate limiter) of their own."""

from __future__ import annotations

import asyncio

from dagmca.config import SessionConfig
from dagmca.errors import EndpointError
from dagmca.graph import ModelRole
from dagmca.llm.factory import Backend
from dagmca.llm.metered import MeteredLLM, Pool
from dagmca.passage import title_of
from dagmca.store.background import BackgroundStore
from dagmca.workspace import BaseWorkspace as Workspace
from dagmca.workspace import ClientLike, Handed
from dagmca.workspace.backends import backend_key
from dagmca.workspace.session import SessionMode, SharedResources, run_and_report
from dagmca.workspace.stored import stored_config


class EvalSessions:
    """Runs and finishes an eval's sessions in `ws`, and builds its judge, all within
    `base`'s concurrency and budgets together. `client`: the debaters' client instead
    of the settings' backend."""

    def __init__(self, ws: Workspace, base: SessionConfig, client: ClientLike | None) -> None:
        self.ws, self.base, self.client = ws, base, client
        self.store: BackgroundStore = ws.store
        self.shared = SharedResources.of(self.store, base)
        self._backends: dict[str, Backend | Handed] = {}
        self._starting = asyncio.Lock()

    @property
    def pool(self) -> Pool:
        return self.shared.pool


    def spent_out(self) -> bool:
        return self.pool.over(0)

    async def backend(self, cfg: SessionConfig) -> Backend | Handed:
        """The backend of `cfg`'s settings but its seed: one for every arm and repeat
        that only the seed tells apart (a client handed in is wrapped once)."""
        unseeded = cfg.model_copy(update={"seed": self.base.seed})
        key = backend_key(unseeded)
        async with self._starting:
            if key not in self._backends:
                self._backends[key] = await self.ws.backend(unseeded, self.client)
            return self._backends[key]

    async def run(self, cfg: SessionConfig, session: str, passage: str | None, question: str) -> None:
        """A new session `session` answering `question` (on `passage`), under its lease
        (SessionBusy, nothing written, when another live process writes it; refused
        when another made it meanwhile)."""
        await self._go(cfg, session, passage or "", question, title_of(question, session), SessionMode.NEW)

    async def resume(self, session: str) -> None:
        """A session cut short, finished with its stored settings under its lease; its
        finished calls are replayed from the cache."""
        node = await self.store.aread(lambda s: s.get_node(session))
        assert node is not None
        cfg = stored_config(node)
        asked = str(node.props.get("question") or "") or None
        title = str(node.props.get("title", session))
        passage = str(node.props.get("passage", ""))
        await self._go(cfg, session, passage, asked, title, SessionMode.RESUME)

    async def _go(
        self,
        cfg: SessionConfig,
        session: str,
        passage: str,
        question: str | None,
        title: str,
        mode: SessionMode,
    ) -> None:
        """The workspace's session, on the eval's backend, gate and spend."""
        folder = self.ws.reports_dir(session)
        fix = "every finished session is kept; run the eval again to finish it"
        opened = self.ws.open_session(
            cfg,
            session_id=session,
            passage=passage,
            question=question,
            mode=mode,
            backend=await self.backend(cfg),
            shared=self.shared,
            fix_when_down=fix,
        )
        async with opened as s:
            await run_and_report(s.state, title=title, model=s.model, out_dir=folder)

    async def check_judge(self, session: str) -> None:
        """The judge's pre-flight, before any session runs: an eval whose judge cannot
        be reached stops before it spends, rather than running every arm and leaving
        every pair unjudged. Through the judge's stack, so the structured-output probe an
        earlier run negotiated with the same endpoint and model is read from the cache,
        and what it asks is logged under `session` (the judge's). The fix names the
        option that sets the judge's endpoint: its own when it has one."""
        llm = await self.metered(session)
        try:
            await llm.stacks[ModelRole.JUDGE].ping()
        except EndpointError as exc:
            own = self.base.roles.get(ModelRole.JUDGE)
            fix = (
                "check --judge-base-url and --judge-model (the judge's own endpoint), and its key's "
                "variable (--judge-api-key-env)"
                if own is not None and own.base_url is not None
                else exc.fix
            )
            raise EndpointError(f"the judge cannot be used: {exc.problem}", fix) from None

    async def metered(self, session: str) -> MeteredLLM:
        """A client of the eval's settings on its gate and spend, its calls logged under
        `session` and kept in the store's response cache (a rerun asks nothing again)."""
        return self._metered(await self.backend(self.base), session)

    def _metered(self, backend: Backend | Handed, session: str) -> MeteredLLM:
        shared = self.shared
        return MeteredLLM.for_session(
            self.base, backend.client, calls=self.store, session=session, gate=shared.gate, pool=shared.pool
        )

    async def judge(self, eval_id: str) -> tuple[MeteredLLM, str]:
        """The judge role's client on the eval's gate and spend, its calls logged under
        the eval id and kept in the store's response cache (a rerun asks nothing again)."""
        backend = await self.backend(self.base)
        llm = self._metered(backend, eval_id)
        # not closed here: its backend is the workspace's, which closes it
        return llm, self.base.role(ModelRole.JUDGE).model or backend.model
