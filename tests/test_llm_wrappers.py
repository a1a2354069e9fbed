"""The wrappers around an LLM client, each alone against a tiny scripted inner client,
and a scripted session's graph and call log against golden snapshots written before
the wrappers replaced one class that did all of their jobs."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from dagmca.graph import CallPhase, CallRecord
from dagmca.llm.base import (
    CallMeta,
    Completion,
    EndpointDown,
    LLMClient,
    LLMError,
    Message,
    PreflightCall,
    Request,
    Usage,
)
from dagmca.llm.fake import ScriptedCall, ScriptedLLM
from dagmca.llm.gate import Gate
from dagmca.llm.openai_backend import Probe
from dagmca.llm.prices import Prices
from dagmca.llm.stack.accounting import Accounting, CountRequests
from dagmca.llm.stack.base import PREFLIGHT, BudgetExhausted
from dagmca.llm.stack.breaker import Breaker, Breaking
from dagmca.llm.stack.budget import Allowance, Budget, Budgeted, Pool
from dagmca.llm.stack.cached import Cached
from dagmca.llm.stack.continuation import Continuation
from dagmca.llm.stack.gated import Gated
from dagmca.llm.stack.meter import Meter
from dagmca.llm.stack.restore import Earlier, Replaying
from dagmca.store.sqlite import SQLiteStore
from tests.support.caches import DictCache
from tests.support.determinism import pure
from tests.support.sessions import run_scripted

SNAPSHOTS = Path(__file__).parent / "snapshots"


# -- golden sessions ---------------------------------------------------------------------
def faulty(call: ScriptedCall) -> Any:
    """`pure`, but one call in five fails, chosen by its prompt (so on every run the same)."""
    if hashlib.sha256(call.prompt.encode()).digest()[0] % 5 == 0:
        return None
    return pure(call)


# `plain`: a small tree, every call made. `squeezed`: one call at a time, turns cut at a
# cap of 8 tokens (continued), and a call budget that refuses the tail of the work (the
# final integration still allowed). `local`: cut turns marked, not continued. `faulty`:
# failed calls recorded, the run degraded around them.
GOLDEN: dict[str, dict[str, Any]] = {
    "plain": dict(max_branches=2, max_depth=1, rounds=2, monitor_every="turn"),
    "squeezed": dict(
        caps=True, max_turn_tokens=8, max_llm_calls=60, concurrency=1, max_branches=2, max_depth=1, rounds=2
    ),
    "local": dict(llm="local", caps=True, max_turn_tokens=8, max_branches=2, max_depth=1, rounds=1),
    "faulty": dict(responder=faulty, endpoint_down_after=50, max_branches=2, max_depth=1, rounds=1),
}
# when the run happened, the settings echoed on the Session node (other settings may be
# added without changing any decision), and how the embedder's thread kept up (its waits
# and batches vary with the machine's load; the vectors do not)
UNTIMED = {"at", "started_at", "finished_at", "created_at", "latency_s", "config", "embedding"}


def _plain(props: dict[str, Any]) -> dict[str, Any]:
    return {k: _untimed(v) for k, v in props.items() if k not in UNTIMED}


def _untimed(value: Any) -> Any:
    """`value` without times, also inside the JSON some properties hold (a stub's checks)."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return _untimed(json.loads(value))
        except ValueError:
            return value
    if isinstance(value, dict):
        return _plain(value)
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def golden_run(name: str, tmp_path: Path) -> dict[str, Any]:
    """Every node, edge and call record of the golden session `name`, times dropped, in
    an order that does not depend on which call returned first."""
    store = SQLiteStore(tmp_path / f"{name}.db")
    store.init_schema()
    try:
        session = f"golden-{name}"
        settings = dict(GOLDEN[name])
        # the stack's decisions on the debate: the ledger (its calls and claims) is tested apart
        settings.setdefault("ledger", "off")
        run_scripted(store, tmp_path, settings.pop("responder", pure), session=session, **settings)
        nodes = [
            {"id": n.id, "kind": n.kind.value, "labels": sorted(n.labels), "props": _plain(n.props)}
            for n in store.nodes(session)
        ]
        edges = [
            {"source": e.source, "type": e.type.value, "target": e.target, "props": _plain(e.props)}
            for e in store.edges(session)
        ]
        calls = [_plain(c.model_dump(mode="json")) for c in store.calls(session)]
        order = lambda item: json.dumps(item, sort_keys=True)  # noqa: E731
        return {
            "nodes": sorted(nodes, key=order),
            "edges": sorted(edges, key=order),
            "calls": sorted(calls, key=order),
        }
    finally:
        store.close()


def write_golden(tmp_path: Path) -> None:
    """Write the snapshots anew (only when a change of the graph is intended)."""
    for name in GOLDEN:
        path = SNAPSHOTS / f"llm_stack_{name}.json"
        path.write_text(json.dumps(golden_run(name, tmp_path), indent=1, sort_keys=True) + "\n")


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_a_scripted_session_is_the_golden_one(name: str, tmp_path: Path) -> None:
    expected = json.loads((SNAPSHOTS / f"llm_stack_{name}.json").read_text())
    got = golden_run(name, tmp_path)
    for kind in ("nodes", "edges"):
        assert len(got[kind]) == len(expected[kind])
        for g, e in zip(got[kind], expected[kind], strict=True):
            if e.get("kind") == "Session":  # settings and figures may grow; none may change
                g = {**g, "props": {k: v for k, v in g["props"].items() if k in e["props"]}}
            assert g == e
    # call records: the same calls, keys and figures; fields added since are not compared
    fields = {k for e in expected["calls"] for k in e}
    trimmed = sorted(
        ({k: v for k, v in g.items() if k in fields} for g in got["calls"]),
        key=lambda c: json.dumps(c, sort_keys=True),
    )
    assert trimmed == expected["calls"]


# -- each layer alone --------------------------------------------------------------------
class Inner(LLMClient):
    """A tiny scripted client: answers (or raises) what it is given, in order, then the
    last again; keeps what it was asked."""

    def __init__(self, *replies: Completion | LLMError, model: str = "m") -> None:
        self.model = model
        self.replies = list(replies) or [Completion(text="ok", finish_reason="stop")]
        self.asked: list[dict[str, Any]] = []
        self.preflight: list[PreflightCall] = []
        self.mode_key: str | None = None
        self.modes_used: list[str] = []
        self.settled: str | None = None

    async def complete(self, request: Request) -> Completion:
        r = request
        self.asked.append({"messages": r.messages, "max_tokens": r.max_tokens, "temperature": r.temperature})
        reply = self.replies[min(len(self.asked), len(self.replies)) - 1]
        if isinstance(reply, LLMError):
            raise reply
        return reply

    def preflight_calls(self) -> list[PreflightCall]:
        return self.preflight

    def negotiated_key(self) -> str | None:
        return self.mode_key

    def use_structured_mode(self, mode: str) -> None:
        self.modes_used.append(mode)

    def negotiation_result(self) -> str | None:
        return self.settled


Q: list[Message] = [{"role": "user", "content": "q"}]


def ask(client: LLMClient, phase: str = "respond", **kwargs: Any) -> Completion:
    return asyncio.run(
        client.complete(
            Request(Q, max_tokens=kwargs.pop("max_tokens", 50), meta=CallMeta(phase=phase), **kwargs)
        )
    )


def reply(text: str = "ok", *, prompt: int = 10, completion: int = 5, **fields: Any) -> Completion:
    usage = Usage(prompt_tokens=prompt, completion_tokens=completion)
    return Completion(text=text, usage=usage, finish_reason=fields.pop("finish_reason", "stop"), **fields)


def test_the_gate_holds_calls_in_flight_to_its_slots() -> None:
    async def main(slots: int | None) -> int:
        inner = ScriptedLLM(delay=0.01)
        client: LLMClient = Gated(inner, Gate(slots)) if slots else inner
        await asyncio.gather(*(client.complete(Request(Q, max_tokens=5)) for _ in range(6)))
        return inner.max_in_flight

    assert asyncio.run(main(2)) == 2
    assert asyncio.run(main(None)) == 6  # without the layer, every call at once


def test_the_cache_answers_a_request_seen_before_without_a_call() -> None:
    inner, cache = Inner(reply("first")), DictCache()
    cached = Cached(inner, cache)
    assert not ask(cached).cache_hit
    hit = ask(cached)
    assert hit.cache_hit and hit.text == "first" and hit.usage.prompt_tokens == 10
    assert len(inner.asked) == 1
    ask(cached, max_tokens=51)  # another request: asked
    assert len(inner.asked) == 2
    # the key is the model's too: the same request to another model is another reply
    other = Cached(Inner(reply("other"), model="m2"), cache)
    assert ask(other).text == "other"


def test_a_cache_not_read_is_still_written() -> None:
    """So a run that did not read it can be resumed from it."""
    inner, cache = Inner(reply("new")), DictCache()
    unread = Cached(inner, cache, read=False)
    assert not ask(unread).cache_hit and not ask(unread).cache_hit
    assert len(inner.asked) == 2 and len(cache.kept) == 1
    assert ask(Cached(Inner(), cache)).text == "new"


def test_the_cache_remembers_the_negotiated_structured_mode() -> None:
    cache = DictCache()
    first = Inner()
    first.mode_key, first.settled = "mode-key", "json_object"
    asyncio.run(Cached(first, cache).ping())
    assert cache.kept == {"mode-key": "json_object"}
    again = Inner()
    again.mode_key = "mode-key"
    asyncio.run(Cached(again, cache).ping())
    assert again.modes_used == ["json_object"]


def test_a_budget_refuses_all_but_the_final_and_leaves_the_preflight_out() -> None:
    meter = Meter()
    allowance = Allowance(meter, Budget(max_calls=4))
    inner = Inner()
    budgeted = Budgeted(inner, allowance)
    meter.calls = 1
    ask(budgeted)  # 1 made + 2 kept for the final < 4
    meter.calls = 2
    with pytest.raises(BudgetExhausted):
        ask(budgeted)
    assert len(inner.asked) == 1 and allowance.hit
    ask(budgeted, phase=CallPhase.FINAL)  # always allowed
    assert len(inner.asked) == 2
    meter.preflight_calls = 1  # the pre-flight's call is each run's overhead: not counted
    ask(budgeted)
    meter.earlier_calls = 1  # an earlier run's is
    with pytest.raises(BudgetExhausted):
        ask(budgeted)


def test_a_build_pool_is_charged_and_bounds_every_session() -> None:
    pool = Pool(Budget(max_tokens=100))
    prices = Prices(per_1k_prompt=1.0, per_1k_completion=2.0)
    one, two = (
        Budgeted(Inner(reply(prompt=30, completion=10)), Allowance(Meter(), pool=pool), prices) for _ in "12"
    )
    ask(one)
    assert (pool.calls, pool.tokens) == (1, 40) and pool.cost_usd == pytest.approx(0.05)
    with pytest.raises(BudgetExhausted):  # 40 + 2 more like it reach 100
        ask(two)


def test_accounting_records_every_call_hits_and_failures_included() -> None:
    meter, records = Meter(), list[CallRecord]()
    prices = Prices(per_1k_prompt=1.0, per_1k_completion=2.0)
    inner = Inner(
        reply(prompt=100, completion=50, retries=1, faults=["timeout"], repaired=True),
        reply(prompt=100, completion=50, cache_hit=True),
        LLMError("no", faults=["server_error"], retries=2),
        LLMError("bad", invalid_output=True),
        BudgetExhausted("spent"),
    )
    acc = Accounting(inner, meter, prices=prices, record=records.append, session="s", role="judge")
    done = ask(acc, phase="judge")
    assert done.text == "ok"
    ask(acc, phase="judge")
    for _ in range(3):
        with pytest.raises(LLMError):
            ask(acc, phase="judge")
    assert [r.cache_hit for r in records] == [False, True, False, False]  # the refusal: no record
    made, hit, failed, invalid = records
    assert invalid.error == "bad"
    assert (made.prompt_tokens, made.cost_usd, made.retries, made.repaired) == (100, 0.2, 1, True)
    assert (made.session, made.role, made.model, made.phase) == ("s", "judge", "m", "judge")
    assert made.key == hit.key != "" and hit.cost_usd == 0.0
    assert failed.error == "no" and failed.faults == ["server_error"]
    assert (meter.cache_hits, meter.failures, meter.invalid_outputs, meter.refused) == (1, 2, 1, 1)
    assert meter.usage.total == 150 and meter.cost_usd == pytest.approx(0.2)
    assert meter.retries == 3 and meter.faults == {"timeout": 1, "server_error": 1} and meter.repairs == 1
    share = meter.by_role[("judge", "m")]
    assert (share.cache_hits, share.failures, share.usage.total) == (1, 2, 150)
    assert share.cost_usd == pytest.approx(0.2)


def test_the_preflight_is_accounted_apart() -> None:
    meter, records = Meter(), list[CallRecord]()
    inner = Inner()
    inner.preflight = [PreflightCall(Usage(prompt_tokens=20, completion_tokens=4), ["bad_request"], 1)]
    acc = Accounting(inner, meter, prices=Prices(per_1k_prompt=1.0), record=records.append, role="debate")
    asyncio.run(acc.ping())
    assert (meter.calls, meter.preflight_calls, meter.preflight_tokens, meter.usage.total) == (1, 1, 24, 24)
    assert meter.preflight_cost_usd == meter.cost_usd == pytest.approx(0.02)
    assert records[0].agent == PREFLIGHT and records[0].phase == "negotiate" and records[0].key == ""
    assert meter.by_role[("debate", "m")].calls == 1


def test_requests_are_counted_as_they_are_sent() -> None:
    meter = Meter()
    seen: list[int] = []

    class Watch(Inner):
        async def complete(self, request: Request) -> Completion:
            seen.append(meter.calls)  # in flight: already counted
            return await super().complete(request)

    counted = CountRequests(Watch(), meter, role="observer")
    ask(counted)
    ask(counted)
    assert seen == [1, 2] and meter.by_role[("observer", "m")].calls == 2


def test_the_breaker_opens_after_failures_in_a_row_only() -> None:
    breaker = Breaker(down_after=3)
    failing = LLMError("down")
    # two stacks (two roles) share the breaker: their failures add up
    one = Breaking(Inner(failing), breaker)
    two = Breaking(Inner(failing, reply(), failing), breaker)
    for client in (one, two):
        with pytest.raises(LLMError):
            ask(client)
    ask(two)  # went through: the count starts again
    assert breaker.in_a_row == 0
    for client in (one, two):
        with pytest.raises(LLMError) as raised:
            ask(client)
        assert not isinstance(raised.value, EndpointDown)
    # not failures: invalid structured output, a budget's refusal, a reply from the cache
    quiet = Breaking(Inner(LLMError("shape", invalid_output=True), BudgetExhausted("spent")), breaker)
    for _ in range(2):
        with pytest.raises(LLMError):
            ask(quiet)
    assert breaker.in_a_row == 2
    ask(Breaking(Inner(reply(cache_hit=True)), breaker))
    assert breaker.in_a_row == 2
    with pytest.raises(EndpointDown, match="3 calls in a row"):
        ask(one)


def test_a_cut_reply_is_continued_once() -> None:
    inner = Inner(reply("The first half", finish_reason="length"), reply("and the rest."))
    done = ask(Continuation(inner), max_tokens=100)
    assert done.text == "The first half and the rest." and done.finish_reason == "stop"
    assert done.usage.prompt_tokens == 20 and len(inner.asked) == 2
    follow = inner.asked[1]
    assert follow["max_tokens"] == 50 and follow["messages"][1] == {
        "role": "assistant",
        "content": "The first half",
    }


def test_a_reply_still_cut_is_marked_and_never_stored_whole() -> None:
    still = Inner(reply("cut", finish_reason="length"), reply("still cut", finish_reason="length"))
    done = ask(Continuation(still))
    assert done.text == "cut still cut […]" and done.faults == ["cut_at_cap"]
    # off: marked at once, no second request
    once = Inner(reply("cut", finish_reason="length"))
    done = ask(Continuation(once, continue_cut=False))
    assert done.text == "cut […]" and done.faults == ["cut_at_cap"] and len(once.asked) == 1
    # a looping reply is not continued (more of it would not mend it)
    loop = Inner(reply("again and again " * 40, finish_reason="length"))
    assert ask(Continuation(loop)).text.endswith("[…]") and len(loop.asked) == 1
    # a structured reply is the backend's to repair
    shaped = Inner(reply("{}", finish_reason="length"))
    assert ask(Continuation(shaped), schema=Probe).text == "{}" and len(shaped.asked) == 1


def test_earlier_spend_is_charged_as_replayed_or_at_once() -> None:
    made = CallRecord(session="s", key="k1", prompt_tokens=10, completion_tokens=5, cost_usd=0.5)
    failed = CallRecord(session="s", key="k2", prompt_tokens=3, error="x")
    skipped = [CallRecord(session="s", key="k3", cache_hit=True), CallRecord(session="s", agent=PREFLIGHT)]
    meter = Meter()
    earlier = Earlier(meter)
    earlier.restore([made, failed, *skipped], replayed=True)
    assert (meter.earlier_calls, meter.earlier_tokens) == (1, 3)  # the failed one, now
    earlier.replayed("k1")
    assert (meter.earlier_calls, meter.earlier_tokens, meter.earlier_cost_usd) == (2, 18, 0.5)
    earlier.replayed("k1")  # replayed once more: paid once
    assert meter.earlier_calls == 2
    revisit = Meter()
    Earlier(revisit).restore([made, failed, *skipped], replayed=False)
    assert revisit.earlier_calls == 2


def test_a_reply_from_the_cache_charges_the_earlier_call_that_paid_for_it() -> None:
    meter, cache = Meter(), DictCache()
    first = Cached(Inner(), cache)
    ask(first)
    key = first.key(Request(Q, max_tokens=50))
    earlier = Earlier(meter)
    earlier.restore([CallRecord(session="s", key=key, prompt_tokens=7)], replayed=True)
    ask(Replaying(Cached(Inner(), cache), earlier))
    assert (meter.earlier_calls, meter.earlier_tokens) == (1, 7)
    ask(Replaying(Inner(), earlier), max_tokens=9)  # not from the cache: nothing charged
    assert meter.earlier_calls == 1
