"""Roles on the LLM layer: each call goes to its role's backend (its model, endpoint,
key, temperature, prices and rate limit), every role sharing the session's gate,
budget, cache, meter and breaker; calls are accounted per role and model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from dagmca.config import SessionConfig
from dagmca.config.roles import RoleSettings
from dagmca.errors import SettingsError, UserError
from dagmca.graph import CallPhase, CallRecord, ModelRole, role_of
from dagmca.llm.base import CallMeta, Completion, EndpointDown, LLMClient, LLMError, Message, Request, Usage
from dagmca.llm.factory import check_backend, open_backend, role_models
from dagmca.llm.fake import ScriptedLLM
from dagmca.llm.limiter import RateLimiter
from dagmca.llm.metered import Budget, MeteredLLM, RoleTerms
from dagmca.llm.openai_backend import OpenAIBackend
from dagmca.llm.prices import Prices
from dagmca.llm.routing import Route, RoutingClient
from dagmca.metrics.session import session_metrics
from dagmca.similarity import HashingEmbedder
from dagmca.store.sqlite import SQLiteStore
from dagmca.workspace.session import run_and_report
from tests.support.caches import DictCache
from tests.support.fault_server import FaultServer
from tests.support.opened import open_state
from tests.support.sessions import PASSAGE

JUDGE_PHASES = {CallPhase.JUDGE.value, CallPhase.MERGE.value, CallPhase.LEDGER.value}
SMALL = dict(max_branches=2, max_depth=1, rounds=1, monitor_every="turn", cache=False)


class Inner(LLMClient):
    """Answers every call; keeps the temperature and the phase of each."""

    def __init__(self, model: str, *, fail: bool = False) -> None:
        self.model = model
        self.fail = fail
        self.asked: list[tuple[str, float]] = []
        self.pinged = 0
        self.structured_mode = f"mode of {model}"

    async def complete(self, request: Request) -> Completion:
        self.asked.append((request.meta.phase, request.temperature))
        if self.fail:
            raise LLMError("down")
        return Completion(
            text=self.model, usage=Usage(prompt_tokens=100, completion_tokens=10), finish_reason="stop"
        )

    async def ping(self) -> None:
        self.pinged += 1


def ask(
    llm: LLMClient, phase: str, *, temperature: float = 0.0, reask: bool = False, content: str = ""
) -> Completion:
    meta = CallMeta(phase=phase, reask=reask)
    messages: list[Message] = [{"role": "user", "content": content or f"q {phase}"}]
    return asyncio.run(llm.complete(Request(messages, max_tokens=20, temperature=temperature, meta=meta)))


def two_roles(judge_temperature: float | None = None) -> tuple[Inner, Inner, RoutingClient]:
    session, judge = Inner("S"), Inner("J")
    routes = {role: Route(session) for role in ModelRole}
    routes[ModelRole.JUDGE] = Route(judge, judge_temperature)
    return session, judge, RoutingClient(routes)


def test_each_call_goes_to_its_roles_backend_at_its_temperature() -> None:
    session, judge, client = two_roles(judge_temperature=0.9)
    records: list[CallRecord] = []
    llm = MeteredLLM(client, concurrency=2, record=records.append, cache=DictCache())
    for phase in ("respond", "judge", "merge", "monitor", "final"):
        ask(llm, phase, temperature=0.2)
    ask(llm, "judge", temperature=1.2, reask=True)  # a re-ask keeps its variation
    assert [p for p, _ in judge.asked] == ["judge", "merge", "judge"]
    assert [p for p, _ in session.asked] == ["respond", "monitor", "final"]
    assert [t for _, t in judge.asked] == [0.9, 0.9, 1.2] and {t for _, t in session.asked} == {0.2}
    assert [(r.phase, r.role, r.model) for r in records[:3]] == [
        ("respond", "debate", "S"),
        ("judge", "judge", "J"),
        ("merge", "judge", "J"),
    ]
    ask(llm, "merge", temperature=0.2)  # the same request as before, to the judge: from the cache
    assert records[-1].cache_hit and len(judge.asked) == 3
    # one cache, keyed by the role's model (and temperature): the same messages asked of
    # another role are another request
    for phase in ("respond", "judge"):
        assert not ask(llm, phase, temperature=0.2, content="same").cache_hit
    assert len(judge.asked) == 4 and len(session.asked) == 4
    # the observers play on the session's model: its reply stands for them
    assert ask(llm, "monitor", temperature=0.2, content="same").cache_hit


def test_one_map_names_the_model_that_plays_each_role() -> None:
    """What a Session node, an eval's report and an answer say played each role: a role
    with a model of its own, that model; every other role, the session's (the model its
    open backend serves, when there is one)."""
    cfg = SessionConfig.model_validate({"llm": "fake", "roles": {"judge": {"model": "J"}}})
    assert role_models(cfg) == {
        ModelRole.DEBATE: "scripted", ModelRole.OBSERVER: "scripted", ModelRole.JUDGE: "J",
        ModelRole.FINAL: "scripted", ModelRole.MAP: "scripted",
    }  # fmt: skip
    served = role_models(cfg, "S")
    assert served[ModelRole.JUDGE] == "J"
    assert {m for r, m in served.items() if r is not ModelRole.JUDGE} == {"S"}


def test_every_role_shares_the_meter_the_budget_and_the_breaker() -> None:
    session, judge, client = two_roles()
    prices = Prices(per_1k_prompt=1.0, per_1k_completion=10.0)
    terms = {ModelRole.JUDGE: RoleTerms(prices)}
    llm = MeteredLLM(client, concurrency=1, terms=terms, budget=Budget(max_calls=5))
    ask(llm, "respond")
    ask(llm, "judge")
    ask(llm, "observe")
    spend = {(s.role, s.model): (s.calls, s.usage.total, s.cost_usd) for s in llm.by_role()}
    assert spend == {("debate", "S"): (2, 220, 0.0), ("judge", "J"): (1, 110, pytest.approx(0.2))}
    assert llm.meter.calls == 3 and llm.meter.cost_usd == pytest.approx(0.2)
    # one budget: three calls of either role leave no room but for the final
    assert llm.exhausted(reserve_calls=2) and llm.budget_hit
    assert ask(llm, "final").text == "S"

    session.fail = judge.fail = True
    down = MeteredLLM(client, concurrency=1, down_after=3)
    for phase in ("respond", "judge"):
        with pytest.raises(LLMError):
            ask(down, phase)
    with pytest.raises(EndpointDown):  # the third failure in a row, whichever role
        ask(down, "respond")


def test_the_preflight_asks_each_backend_once() -> None:
    session, judge, client = two_roles()
    llm = MeteredLLM(client, concurrency=1)
    asyncio.run(llm.ping())
    assert (session.pinged, judge.pinged) == (1, 1)
    assert llm.structured_mode == "mode of S"  # the session's own


def run(
    cfg: SessionConfig, client: LLMClient, store: SQLiteStore, tmp_path: Path, session: str
) -> MeteredLLM:
    async def go() -> MeteredLLM:
        async with open_state(
            cfg, store, client=client, session_id=session, passage=PASSAGE, embedder=HashingEmbedder()
        ) as state:
            await run_and_report(state, title="t", model=client.model, out_dir=tmp_path / session)
            return state.handles.llm

    return asyncio.run(go())


def test_a_role_on_its_own_fake_model(store: SQLiteStore, tmp_path: Path) -> None:
    """`llm fake` per role: the judge and the observers on their own scripted models,
    at their own prices; the rest on the session's."""
    priced = RoleSettings(model="J", price_per_1k_prompt=1.0, price_per_1k_completion=1.0)
    cfg = SessionConfig(
        llm="fake",
        pair_prefilter=0.0,
        stub_prefilter=0.0,
        roles={ModelRole.JUDGE: priced, ModelRole.OBSERVER: RoleSettings(model="O", temperature=0.7)},
        **SMALL,
    )
    backend = open_backend(cfg)
    client = backend.client
    assert isinstance(client, RoutingClient) and backend.model == "scripted"
    fakes = {role: route.client for role, route in client.routes.items()}
    assert fakes[ModelRole.DEBATE] is fakes[ModelRole.FINAL] is fakes[ModelRole.MAP]  # one, reused
    llm = run(cfg, client, store, tmp_path, "fake-roles")
    for fake in fakes.values():
        assert isinstance(fake, ScriptedLLM)
        assert fake.calls and all(role_of(c.meta.phase) in fakes_of(fakes, fake) for c in fake.calls)
    records = [r for r in store.calls("fake-roles") if r.agent != "pre-flight"]
    assert {r.phase for r in records if r.role == "judge"} & JUDGE_PHASES
    for r in records:
        assert r.role == role_of(r.phase).value and r.model == fakes[ModelRole(r.role)].model
        assert (r.cost_usd > 0) == (r.role == "judge")
    spend = {(s.role, s.model) for s in llm.by_role()}
    assert {("debate", "scripted"), ("judge", "J"), ("observer", "O")} <= spend
    assert sum(s.calls for s in llm.by_role()) == llm.meter.calls
    assert llm.meter.cost_usd > 0
    assert sum(s.cost_usd for s in llm.by_role()) == pytest.approx(llm.meter.cost_usd)
    # the Session node, status.json and the metrics say which model played which role
    head = store.get_node("fake-roles")
    assert head is not None
    assert json.loads(str(head.props["role_models"])) == {
        "debate": "scripted", "observer": "O", "judge": "J", "final": "scripted", "map": "scripted",
    }  # fmt: skip
    stored = {(u["role"], u["model"]): u["calls"] for u in json.loads(str(head.props["role_calls"]))}
    status = json.loads((tmp_path / "fake-roles" / "status.json").read_text())
    live = {(r["role"], r["model"]): r["calls"] for r in status["roles"]}
    assert stored[("judge", "J")] == live[("judge", "J")] > 0 and stored[("observer", "O")] > 0
    metrics = session_metrics(store, "fake-roles", HashingEmbedder())
    assert {(u.role, u.model): u.calls for u in metrics.by_role} == stored


def fakes_of(fakes: dict[ModelRole, LLMClient], fake: LLMClient) -> set[ModelRole]:
    return {role for role, f in fakes.items() if f is fake}


@pytest.mark.slow
def test_the_judge_on_its_own_endpoint(store: SQLiteStore, tmp_path: Path) -> None:
    """The session on one OpenAI-compatible server, the judge role on another: every
    judge-role call (verdicts and merges) reaches the second, and only those."""
    bodies: dict[str, list[dict[str, Any]]] = {"session": [], "judge": []}
    with (
        FaultServer(on_request=bodies["session"].append) as first,
        FaultServer(models=("J",), on_request=bodies["judge"].append) as second,
    ):
        cfg = SessionConfig(
            llm="openai",
            model="fault-model",
            base_url=first.base_url,
            pair_prefilter=0.0,
            stub_prefilter=0.0,
            roles={ModelRole.JUDGE: RoleSettings(model="J", base_url=second.base_url)},
            **SMALL,
        )
        check_backend(cfg)
        backend = open_backend(cfg)
        try:
            run(cfg, backend.client, store, tmp_path, "endpoints")
        finally:
            asyncio.run(backend.client.aclose())
    records = store.calls("endpoints")
    judged = [r for r in records if r.phase in JUDGE_PHASES]
    assert judged and all((r.role, r.model) == ("judge", "J") for r in judged)
    others = [r for r in records if r.phase not in JUDGE_PHASES and r.agent != "pre-flight"]
    assert others and all(r.model == "fault-model" and r.role == role_of(r.phase).value for r in others)
    # each server saw its own model only: the judge's calls, and each one's pre-flight
    assert {b["model"] for b in bodies["judge"]} == {"J"}
    assert {b["model"] for b in bodies["session"]} == {"fault-model"}
    preflight = {r.role: 0 for r in records}
    for r in records:
        if r.agent == "pre-flight":
            preflight[r.role] += 1
    assert len(bodies["judge"]) == len(judged) + preflight.get("judge", 0)
    assert len(bodies["session"]) == len(others) + preflight.get("debate", 0)


def test_identical_roles_share_a_backend_and_an_endpoint_shares_its_limiter() -> None:
    cfg = SessionConfig(
        llm="openai",
        model="m",
        base_url="http://127.0.0.1:9/v1",
        rpm=60,
        roles={
            ModelRole.OBSERVER: RoleSettings(model="small"),  # same endpoint, another model
            ModelRole.FINAL: RoleSettings(model="m"),  # the session's own, said again
            ModelRole.JUDGE: RoleSettings(model="J", base_url="http://127.0.0.1:8/v1", rpm=10),
        },
    )
    client = open_backend(cfg).client
    try:
        assert isinstance(client, RoutingClient)
        backends = {role: route.client for role, route in client.routes.items()}
        assert all(isinstance(b, OpenAIBackend) for b in backends.values())
        debate, observer, judge = (
            backends[r] for r in (ModelRole.DEBATE, ModelRole.OBSERVER, ModelRole.JUDGE)
        )
        assert backends[ModelRole.FINAL] is debate is backends[ModelRole.MAP]
        assert observer is not debate and judge is not debate
        assert isinstance(debate, OpenAIBackend) and isinstance(observer, OpenAIBackend)
        assert isinstance(judge, OpenAIBackend)
        assert observer.limiter is debate.limiter and judge.limiter is not debate.limiter
        assert judge.limiter is not None and debate.limiter is not None
        assert judge.limiter.rate == RateLimiter(10).rate and debate.limiter.rate == RateLimiter(60).rate
        assert client.limiter is debate.limiter
    finally:
        asyncio.run(client.aclose())
    # no role set: the one backend, as it is
    plain = open_backend(SessionConfig(llm="openai", model="m", base_url="http://127.0.0.1:9/v1")).client
    assert isinstance(plain, OpenAIBackend)
    asyncio.run(plain.aclose())


def test_a_roles_key_variable_must_be_set(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = SessionConfig(
        llm="fake",
        roles={
            ModelRole.JUDGE: RoleSettings(
                model="J", base_url="http://127.0.0.1:9/v1", api_key_env="JUDGE_KEY"
            )
        },
    )
    with pytest.raises(UserError, match="role judge: the API key variable JUDGE_KEY is not set"):
        check_backend(cfg)
    with pytest.raises(UserError, match="JUDGE_KEY"):
        open_backend(cfg)
    monkeypatch.setenv("JUDGE_KEY", "sk-judge-key")
    check_backend(cfg)
    client = open_backend(cfg).client
    assert isinstance(client, RoutingClient)
    judge = client.routes[ModelRole.JUDGE].client
    assert isinstance(judge, OpenAIBackend) and judge.client.api_key == "sk-judge-key"
    asyncio.run(client.aclose())
    # a role on an endpoint needs a model: the session's (fake) has none to lend
    nameless = SessionConfig(
        llm="local", roles={ModelRole.MAP: RoleSettings(base_url="http://127.0.0.1:9/v1")}
    )
    with pytest.raises(UserError, match="role map: --llm openai needs a model name"):
        check_backend(nameless)


def test_call_records_written_before_roles_still_load(store: SQLiteStore) -> None:
    old = '{"session": "s", "agent": "a", "phase": "respond", "model": "m", "key": "k", "at": "2025-01-01"}'
    with store._tx() as cur:
        cur.execute("INSERT INTO llm_calls(session, record) VALUES (?, ?)", ("s", old))
    store.record_calls([CallRecord(session="s", model="J", role="judge")])
    assert [(c.model, c.role) for c in store.calls("s")] == [("m", ""), ("J", "judge")]


@pytest.mark.slow
def test_a_role_endpoint_that_does_not_answer_is_named_before_any_call(
    store: SQLiteStore, tmp_path: Path
) -> None:
    """The session's endpoint answers; the judge's does not: the pre-flight names the
    judge's setting (a SettingsError, exit 2 on the CLI), and no turn was asked."""
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    asked: list[dict[str, Any]] = []
    with FaultServer(on_request=asked.append) as first:
        cfg = SessionConfig(
            llm="openai",
            model="fault-model",
            base_url=first.base_url,
            max_retries=0,
            roles={ModelRole.JUDGE: RoleSettings(model="J", base_url=dead)},
            **SMALL,
        )
        backend = open_backend(cfg)
        try:
            with pytest.raises(SettingsError, match=r"roles\.judge: its endpoint does not answer"):
                run(cfg, backend.client, store, tmp_path, "dead-judge")
        finally:
            asyncio.run(backend.client.aclose())
    records = store.calls("dead-judge")
    assert not [c for c in records if c.agent != "pre-flight"]
    # the session's server saw its own pre-flight and nothing else
    assert len(asked) == len([c for c in records if c.agent == "pre-flight" and c.role == "debate"])


@pytest.mark.slow
def test_doctor_checks_every_endpoint_in_use(tmp_path: Path) -> None:
    """One check per distinct endpoint: the session's answers, the judge's does not."""
    import socket

    from dagmca.doctor import run_checks

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    with FaultServer() as first:
        cfg = SessionConfig(
            llm="openai",
            model="fault-model",
            base_url=first.base_url,
            max_retries=0,
            roles={
                ModelRole.JUDGE: RoleSettings(model="J", base_url=dead),
                ModelRole.OBSERVER: RoleSettings(model="fault-model"),  # the session's own again
            },
        )
        checks = {c.name: c for c in run_checks(cfg, str(tmp_path / "d.db"))}
    assert checks["llm"].ok and "observer" in checks["llm"].detail
    assert not checks["llm (judge)"].ok
