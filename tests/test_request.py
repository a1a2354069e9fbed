"""One Request through the stack: a field no layer knows reaches the backend as it was
asked, through every layer, a layer's own second request included."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace

import pytest

from dagmca.graph import CallPhase, ModelRole
from dagmca.llm.base import CallMeta, Message, Request
from dagmca.llm.fake import ScriptedCall, ScriptedLLM
from dagmca.llm.metered import MeteredLLM
from dagmca.llm.routing import Route, RoutingClient
from dagmca.prompts.schemas import PairVerdict
from tests.support.caches import DictCache

LONG = " ".join(f"word{i}" for i in range(120))  # no loop: a cut reply is continued


@dataclass(frozen=True, slots=True)
class Tagged(Request):
    """A Request with a field added after the stack was written, as a new sampling
    parameter would be."""

    top_k: int = 0


def reply(call: ScriptedCall) -> object:
    if call.schema is None:
        return LONG  # longer than its cap: cut, then continued once
    return PairVerdict(verdict="converge", shared_claim="The councils pay.", reason="Fine.")  # hollow


def test_a_field_no_layer_knows_reaches_the_backend_through_every_layer() -> None:
    backend = ScriptedLLM(reply, caps=True)
    # the debate role at its own temperature, so the routing changes the request too
    routes = {role: Route(backend, 0.7 if role is ModelRole.DEBATE else None) for role in ModelRole}
    llm = MeteredLLM(RoutingClient(routes), concurrency=2, cache=DictCache())
    messages: list[Message] = [{"role": "user", "content": "Reply, and give a reason."}]
    plain = Tagged(messages, max_tokens=40, seed=5, meta=CallMeta(agent="a", phase="respond"), top_k=40)
    judged = replace(plain, schema=PairVerdict, meta=CallMeta(agent="j", phase=CallPhase.JUDGE), top_k=41)

    async def main() -> None:
        await llm.complete(plain)  # cut at its cap: the continuation asks once more
        await llm.complete(judged)  # a hollow reason: asked again once
        await RoutingClient(routes).complete(plain)  # the roles' client, unmetered

    asyncio.run(main())
    received = [call.request for call in backend.calls]
    assert len(received) == 5
    first, more, judge, again, routed = received
    assert routed == replace(plain, temperature=0.7)
    for got in received:
        assert isinstance(got, Tagged)
    assert (first.top_k, more.top_k, judge.top_k, again.top_k) == (40, 40, 41, 41)
    # what the layers change, they change; the rest is the request as asked
    assert first == replace(plain, temperature=0.7, meta=first.meta)
    assert first.meta == plain.meta.model_copy(update={"key": first.meta.key}) and first.meta.key
    assert more.messages[: len(messages)] == messages and more.max_tokens == 32
    assert judge == replace(judged, meta=judge.meta)
    assert (again.seed, again.meta.reask) == (6, True) and again.temperature > judged.temperature


def test_a_request_is_a_value() -> None:
    messages: list[Message] = [{"role": "user", "content": "q"}]
    one = Request(messages, max_tokens=5)
    assert one == Request([{"role": "user", "content": "q"}], max_tokens=5)
    assert one.with_meta(agent="a") != one and one.meta == CallMeta()
    with pytest.raises(AttributeError):
        one.max_tokens = 6  # type: ignore[misc]
    with pytest.raises(TypeError):
        hash(one)  # a list of messages: the cache key is its identity
