"""A model call as span attributes: OpenTelemetry's GenAI semantic conventions, so the
tools that read them (Jaeger, Phoenix, Langfuse, Grafana) show model, tokens and
finish reasons as they do for any LLM application; plus dagmca's own keys."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

AttrValue = str | bool | int | float | Sequence[str]
Attributes = dict[str, AttrValue]

OPERATION = "chat"


@dataclass(slots=True)  # built on every call of a traced run
class Call:
    """One model call as the LLM layer saw it. `messages` and `reply` reach a span only
    when the run asks for content: a passage may be private."""

    model: str
    role: str
    agent: str
    debate: str
    phase: str
    start_ns: int
    end_ns: int
    messages: Sequence[Mapping[str, object]] = ()
    reply: str = ""
    max_tokens: int | None = None
    temperature: float | None = None
    structured: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    finish_reason: str = ""
    cache_hit: bool = False
    retries: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0  # the request's own time, without waiting for a slot
    repaired: bool = False
    reask: bool = False
    faults: tuple[str, ...] = ()
    error: str = ""  # the failure's kind (its class), "" when the call was answered


def name(call: Call) -> str:
    """The span's name as the conventions form it: operation and model."""
    return f"{OPERATION} {call.model}"


def attributes(call: Call, *, content: bool) -> Attributes:
    """The call's attributes: the stable ones, then its measures, then (with content)
    its prompt and reply."""
    attrs = stable_attributes(call)
    attrs.update(measures(call))
    if content and call.messages:  # a failed call's prompt too: it may say why it failed
        attrs["gen_ai.input.messages"] = _messages(call.messages)
    if content and not call.error:
        reply = {"role": "assistant", "parts": [{"type": "text", "content": call.reply}]}
        attrs["gen_ai.output.messages"] = json.dumps(
            [{**reply, "finish_reason": call.finish_reason or "stop"}], ensure_ascii=False
        )
    return attrs


def stable_attributes(call: Call) -> Attributes:
    """What the call's attributes say of it but its measures."""
    attrs: Attributes = {
        "gen_ai.operation.name": OPERATION,
        "gen_ai.request.model": call.model,
        "dagmca.agent": call.agent,
        "dagmca.role": call.role,
        "dagmca.phase": call.phase,
        "dagmca.debate": call.debate,
        "dagmca.cache_hit": call.cache_hit,
        "dagmca.retries": call.retries,
    }
    if call.max_tokens is not None:
        attrs["gen_ai.request.max_tokens"] = call.max_tokens
    if call.temperature is not None:
        attrs["gen_ai.request.temperature"] = call.temperature
    # what is true of nearly every call is left out unless it is not: every attribute is
    # encoded once per call
    if call.structured:
        attrs["gen_ai.output.type"] = "json"
    if call.faults:
        attrs["dagmca.faults"] = list(call.faults)
    if call.reask:
        attrs["dagmca.reask"] = True
    if call.error:
        attrs["error.type"] = call.error
        return attrs
    # the backend is asked for this model; dagmca serves no other under its name
    attrs["gen_ai.response.model"] = call.model
    attrs["gen_ai.response.finish_reasons"] = [call.finish_reason] if call.finish_reason else []
    if call.repaired:
        attrs["dagmca.repaired"] = True
    return attrs


def measures(call: Call) -> Attributes:
    """The call's cost, tokens and latency. A reply from the response cache used no
    tokens: its usage is zero, so the tokens over a trace's call spans add up to what the
    run spent; a failed call's usage is what it is known to have spent (a pre-flight
    request's)."""
    attrs: Attributes = {
        "dagmca.cost_usd": call.cost_usd,
        "gen_ai.usage.input_tokens": 0 if call.cache_hit else call.input_tokens,
        "gen_ai.usage.output_tokens": 0 if call.cache_hit else call.output_tokens,
    }
    if not call.error:
        attrs["dagmca.latency_s"] = round(call.latency_s, 4)
    return attrs


def _messages(messages: Sequence[Mapping[str, object]]) -> str:
    """The prompt in the conventions' shape: a role and its parts per message."""
    return json.dumps(
        [{"role": m.get("role", "user"), "parts": [{"type": "text", "content": m.get("content", "")}]}
         for m in messages],
        ensure_ascii=False,
    )  # fmt: skip


def event_attributes(data: Mapping[str, object], words: frozenset[str], *, content: bool) -> Attributes:
    """A run event's fields as span-event attributes: scalars as they are, lists of
    words as lists, anything richer as JSON; the fields in `words` (questions,
    reasons: the passage's or the models' words) only with content."""
    attrs: Attributes = {}
    for key, value in data.items():
        if value is None or (key in words and not content):
            continue
        if isinstance(value, str | bool | int | float):
            attrs[key] = value
        elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            attrs[key] = [str(v) for v in value]
        else:
            attrs[key] = json.dumps(value, ensure_ascii=False, default=str)
    return attrs
