"""N sessions of one passage and question, as one unit (`run --samples N`).

Each sample is the base settings with its own seed (the base seed plus its place) and,
with `vary`, its own temperature or model; its agents start from nothing (no persona's
memory: samples are drawn independently). Those settings are the sample session's own,
kept on its Session node. The sessions' ids are the study's and their place, the study's
id a digest of the passage, the question and every sample's settings: the same command
again finds them, skips those that ended, resumes the rest from the cache (no finished
call is asked again) and starts the ones never started. They run `parallel` at a time on
one concurrency limit, one spend and, per endpoint, one rate limiter: samples of one
backend's settings but the seed and temperature share that backend (both reach each
request with the call), and models on one endpoint share its limiter."""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

from dagmca.config import SessionConfig
from dagmca.errors import UserError
from dagmca.graph import NodeRecord, SessionStatus
from dagmca.llm.factory import Backend
from dagmca.passage import title_of
from dagmca.stability.models import SampleInfo
from dagmca.workspace import BaseWorkspace, ClientLike, Handed
from dagmca.workspace.backends import backend_key
from dagmca.workspace.session import SessionMode, SharedResources, run_and_report
from dagmca.workspace.stored import RUNTIME, differences, stored_config

Vary = Literal["seed", "temperature", "model"]
VARIES: tuple[Vary, ...] = ("seed", "temperature", "model")
SAMPLES_PREFIX = "samples-"
# the temperatures samples spread over when none are given: from near-greedy to the
# upper end of what a debate's prose stays readable at
SPREAD = (0.2, 1.0)


def sample_settings(
    base: SessionConfig,
    samples: int,
    vary: Vary = "seed",
    *,
    models: Sequence[str] = (),
    temperatures: Sequence[float] = (),
) -> list[SessionConfig]:
    """Each sample's settings: the base seed plus its place, its agents' memory its own
    (`agent_memory` session); with `vary` temperature, `temperatures` in turn (default:
    spread evenly over SPREAD), with model, `models` in turn (two or more)."""
    if samples < 2:
        raise UserError("samples must be 2 or more: one session is one sample", "pass --samples 2 or more")
    if vary not in VARIES:
        raise UserError(f"--vary: {vary!r} is not seed, temperature or model", "use one of those")
    if vary == "model" and len(set(models)) < 2:
        raise UserError("--vary model needs two or more models", "pass --models MODEL,MODEL")
    if vary != "model" and models:
        raise UserError("--models is for --vary model", "add --vary model, or leave --models out")
    if vary != "temperature" and temperatures:
        raise UserError("--temperatures is for --vary temperature", "add --vary temperature")
    temps = list(temperatures) or _spread(samples)
    out = []
    for i in range(samples):
        # each sample's agents start from nothing: a sample whose agents carried what
        # another sample's kept would not be drawn independently of it (and would
        # depend on which one ended first)
        update: dict[str, Any] = {"seed": base.seed + i, "agent_memory": "session"}
        if vary == "temperature":
            update["temperature"] = temps[i % len(temps)]
        if vary == "model":
            update["model"] = models[i % len(models)]
        out.append(SessionConfig.model_validate({**base.model_dump(), **update}))
    return out


def _spread(n: int) -> list[float]:
    lo, hi = SPREAD
    return [round(lo + (hi - lo) * i / (n - 1), 2) for i in range(n)]


def samples_study(text: str, question: str | None, configs: Sequence[SessionConfig]) -> str:
    """The study id of these samples: a digest of the passage, the question and every
    setting that can change an answer."""
    made = {
        "passage": hashlib.sha256(text.encode()).hexdigest(),
        "question": question,
        "samples": [c.model_dump(mode="json", exclude=set(RUNTIME)) for c in configs],
    }
    return SAMPLES_PREFIX + hashlib.sha256(json.dumps(made, sort_keys=True).encode()).hexdigest()[:12]


def session_ids(study: str, n: int) -> list[str]:
    return [f"{study}-{i + 1}" for i in range(n)]


class SampleRuns:
    """Runs a study's samples in `ws` within `base`'s concurrency and budgets together;
    `client`: the debaters' client instead of the settings' backends."""

    def __init__(self, ws: BaseWorkspace, base: SessionConfig, client: ClientLike | None) -> None:
        self.ws, self.base, self.client = ws, base, client
        self.shared = SharedResources.of(ws.store, base)
        self._backends: dict[str, Backend | Handed] = {}
        self._starting = asyncio.Lock()

    async def backend(self, cfg: SessionConfig) -> Backend | Handed:
        """The backend of `cfg`'s settings but its seed: one for every sample that only
        the seed (or the temperature, applied per call) tells apart. A second model on
        an endpoint another already uses takes that one's rate limiter."""
        unseeded = cfg.model_copy(update={"seed": self.base.seed})
        key = backend_key(unseeded)
        async with self._starting:
            if key not in self._backends:
                made = await self.ws.backend(unseeded, self.client)
                _share_limiter(made, list(self._backends.values()))
                self._backends[key] = made
            return self._backends[key]

    async def run(
        self,
        configs: Sequence[SessionConfig],
        ids: Sequence[str],
        text: str,
        question: str | None,
        *,
        parallel: int,
        on_done: Callable[[SampleInfo], None] | None = None,
    ) -> list[SampleInfo]:
        """Every sample, `parallel` at a time; when one fails for good (its endpoint is
        down), the others are stopped and the failure raised: what they finished is
        kept, and the same call again goes on from there."""
        slots = asyncio.Semaphore(parallel)

        async def one(i: int) -> SampleInfo:
            async with slots:
                info = await self._sample(i, configs[i], ids[i], text, question)
            if on_done is not None:
                on_done(info)
            return info

        tasks = [asyncio.ensure_future(one(i)) for i in range(len(configs))]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise

    async def _sample(
        self, i: int, cfg: SessionConfig, sid: str, text: str, question: str | None
    ) -> SampleInfo:
        store = self.ws.store
        node = await store.aread(lambda s: s.get_node(sid))
        if node is not None:
            _same_sample(node, cfg, text, question)
        status = SessionStatus.of(node) if node is not None else SessionStatus.RUNNING
        model = str(node.props.get("model", "")) if node is not None else ""
        ran = not status.ended()
        if ran:  # under its lease, taken when the session opens
            mode = SessionMode.NEW if node is None else SessionMode.RESUME
            run_cfg = cfg if node is None else _resumed(node, cfg)
            opened = self.ws.open_session(
                run_cfg, session_id=sid, passage=text, question=question, mode=mode,
                backend=await self.backend(run_cfg), shared=self.shared,
                fix_when_down="every finished call is kept; the same command again goes on",
            )  # fmt: skip
            async with opened as s:
                result = await run_and_report(
                    s.state, title=title_of(question or text, sid), model=s.model,
                    out_dir=self.ws.reports_dir(sid),
                )  # fmt: skip
            status, model = result.session.status, s.model
        return SampleInfo(
            session=sid, sample=i + 1, model=model, seed=cfg.seed,
            temperature=cfg.temperature, status=status, ran=ran,
        )  # fmt: skip


def _same_sample(node: NodeRecord, cfg: SessionConfig, text: str, question: str | None) -> None:
    found = (str(node.props.get("passage", "")), str(node.props.get("question") or "") or None)
    said = differences(stored_config(node), cfg, found, (text, question))
    if said:
        raise UserError(
            f"session {node.id} already exists with other settings: {'; '.join(said)}",
            "give another --study, or the settings it ran with",
        )


def _resumed(node: NodeRecord, cfg: SessionConfig) -> SessionConfig:
    """A sample cut short, finished with its own settings (those that change an answer
    are the same as `cfg`'s; the rest, a raised budget or a moved endpoint, are `cfg`'s)."""
    runtime = {k: getattr(cfg, k) for k in RUNTIME}
    return stored_config(node).model_copy(update=runtime)


def _share_limiter(made: Backend | Handed, others: Sequence[Backend | Handed]) -> None:
    """`made` takes the rate limiter of a backend already made on the same endpoint."""
    where = _endpoint(made.client)
    if where is None:
        return
    for other in others:
        if _endpoint(other.client) == where:
            made.client.limiter = other.client.limiter  # type: ignore[attr-defined]
            return


def _endpoint(client: object) -> str | None:
    """Where an OpenAI-compatible backend sends (its client's URL), when it has a rate
    limiter; None for any other client."""
    if getattr(client, "limiter", None) is None:
        return None
    return str(getattr(getattr(client, "client", None), "base_url", "")) or None
