"""The `openai` backend: the official client against any OpenAI-compatible endpoint."""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any, Literal

import openai
from openai import AsyncOpenAI
from pydantic import BaseModel, ValidationError

from dagmca import aio
from dagmca.errors import EndpointError
from dagmca.graph import Strict
from dagmca.llm import retry as r
from dagmca.llm.base import Completion, LLMClient, LLMError, Message, PreflightCall, Request, Text, Usage
from dagmca.llm.limiter import RateLimiter
from dagmca.llm.openai_call import post_chat
from dagmca.llm.retry import RetryableFault, RetryPolicy
from dagmca.llm.structured import (
    IN_PROMPT,
    MODES,
    StructuredMode,
    find_json,
    response_format,
    salvage,
    short_error,
    wire_schema,
    with_schema_in_prompt,
)
from dagmca.llm.tokens import is_reasoning_model


@dataclass
class _Trace:
    """What one logical call went through: retries and faults, by kind."""

    retries: int = 0
    faults: list[str] = field(default_factory=list)


class Probe(Strict):
    """The pre-flight's structured request: small, with a length keyword to strip."""

    answer: Literal["yes", "no"]
    reason: Text(120)  # type: ignore[valid-type]


PROBE: list[Message] = [
    {"role": "user", "content": "Is water wet? Answer yes or no, with a one-sentence reason, as JSON."}
]


class OpenAIBackend(LLMClient):
    """Takes a ready `AsyncOpenAI` client, so callers and tests can hand one in.

    Retries are ours, not the client's (build the client with max_retries=0), so that
    every fault is counted and Retry-After is honoured the same way everywhere. The
    client's timeout is the per-call timeout.

    `structured`: a fixed structured-output mode (the local server's is known), or None
    to negotiate one at the pre-flight. Reasoning models (o1, o3, o4, gpt-5) get
    `max_completion_tokens`, no temperature, and `reasoning_effort` when given; an
    endpoint that refuses `max_tokens` or a temperature at the pre-flight gets the same.
    """

    def __init__(
        self,
        client: AsyncOpenAI,
        model: str,
        *,
        policy: RetryPolicy | None = None,
        seed: int = 0,
        structured: StructuredMode | None = None,
        reasoning_effort: str | None = None,
        sampling: dict[str, float] | None = None,
        limiter: RateLimiter | None = None,
        decision_first: bool = False,
    ) -> None:
        self.client = client
        self.decision_first = decision_first
        self.limiter = limiter
        self.sampling = dict(sampling or {})
        self.model = model
        self.policy = policy or RetryPolicy()
        self._rng = random.Random(seed)  # jitter only: never reaches a prompt or the graph
        # Error text can quote the request (a refused key is echoed back by some servers).
        self._secrets = [k for k in (client.api_key,) if k and len(k) >= 6]
        self.negotiate = structured is None
        self.mode = structured or StructuredMode.STRICT
        self.structured_mode = self.mode.value
        reasoning = is_reasoning_model(model)
        self.token_param = "max_completion_tokens" if reasoning else "max_tokens"
        self.send_temperature = not reasoning
        self.reasoning_effort = reasoning_effort
        self.preflight: list[PreflightCall] = []
        self.negotiated = False  # this pre-flight settled the mode by asking
        self._pinging = asyncio.Lock()

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    # -- the pre-flight -------------------------------------------------------------
    def negotiated_key(self) -> str | None:
        if not self.negotiate:
            return None
        what = f"structured-output mode\n{self.client.base_url}\n{self.model}"
        return hashlib.sha256(what.encode()).hexdigest()

    def preflight_calls(self) -> list[PreflightCall]:
        return self.preflight

    def negotiation_result(self) -> str | None:
        return self.mode.value if self.negotiated else None

    def use_structured_mode(self, mode: str) -> None:
        if self.negotiate and mode in {m.value for m in MODES}:
            self.mode = StructuredMode(mode)
            self.structured_mode = self.mode.value
            self.negotiate = False

    async def ping(self) -> None:
        """The endpoint answers and serves the model (a flaky endpoint gets two more
        tries, a dead one fails in about a second), and the structured-output mode is
        negotiated, unless it is fixed. The two go out together: the negotiation waits
        one round trip less, and when the endpoint or the model is wrong, that error is
        the one reported (the negotiation is cancelled). A backend shared by sessions
        that start together (an eval's, a build's) negotiates once, and each ping's
        `preflight_calls` are its own requests, so none is accounted twice."""
        async with self._pinging:
            self.preflight = []
            if not self.negotiate or self.negotiated:
                await self._check_endpoint()
                return
            negotiation = asyncio.create_task(self._negotiate())
            async with aio.cancelled_on_failure(negotiation):
                await self._check_endpoint()
            await negotiation

    async def _check_endpoint(self) -> None:
        for attempt in range(1, 4):
            try:
                models = await self.client.with_options(timeout=10.0).models.list()
                break
            except openai.AuthenticationError:
                raise EndpointError(
                    f"the LLM endpoint {self.client.base_url} refused the API key", "check OPENAI_API_KEY"
                ) from None
            except (openai.APIError, ValueError) as exc:
                if r.classify(exc) is None or attempt == 3:
                    why = self.redact(r.why(exc))[:200]
                    raise EndpointError(
                        f"the LLM endpoint {self.client.base_url} is not usable: {why}",
                        "check --base-url and that the server is running",
                    ) from None
                await asyncio.sleep(0.3 * attempt)
        ids = [m.id for m in models.data]
        if ids and self.model not in ids and not any(i.endswith(self.model) for i in ids):
            shown = ", ".join(ids[:5])
            raise EndpointError(
                f"model {self.model!r} is not served by {self.client.base_url} (it has: {shown})",
                "pick one with --model",
            )
        served = next((m for m in models.data if m.id == self.model), None)
        reported = (served.model_extra or {}).get("max_model_len") if served is not None else None  # vLLM
        if isinstance(reported, int) and reported > 0:
            self.reported_context_window = reported

    async def _negotiate(self) -> None:
        """Try each structured-output mode, best first: the first the endpoint accepts and
        answers with valid JSON wins; failing that, the first it accepts."""
        accepted: StructuredMode | None = None
        failing = False
        for mode in MODES:
            try:
                done = await self._request(PROBE, Probe, mode, max_tokens=120, temperature=0.0, seed=0)
            except LLMError as exc:
                failing = failing or not exc.refused
                continue  # refused (400) or failing: the next mode
            accepted = accepted or mode
            try:
                Probe.model_validate_json(find_json(done))
            except ValidationError:
                continue
            accepted = mode
            break
        if accepted is None and failing:
            # The endpoint failed requests rather than refusing a mode: that says nothing
            # about JSON. Keep the best mode; the run meets the failures itself (and stops,
            # resumably, if the endpoint is down).
            self.structured_mode = f"{self.mode.value} (not negotiated: the endpoint was failing)"
            return
        if accepted is None:
            raise EndpointError(
                f"the LLM endpoint {self.client.base_url} refused every way of asking for JSON",
                "check the endpoint's logs; structured output is needed for observers and judges",
            )
        self.mode = accepted
        self.structured_mode = accepted.value
        self.negotiated = True

    async def _request(
        self,
        messages: list[Message],
        schema: type[BaseModel],
        mode: StructuredMode,
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None,
    ) -> str:
        """One structured request in `mode` (the pre-flight's), adapting the token
        parameter and temperature to what the endpoint accepts."""
        for _ in range(3):
            wire_messages, _ = self._wire(messages, schema, mode)
            kwargs = self._kwargs(max_tokens, temperature, seed)
            fmt = response_format(schema, mode, self.decision_first)
            if fmt is not None:
                kwargs["response_format"] = fmt
            trace = _Trace()
            try:
                text, _, usage = await self._create(wire_messages, kwargs, trace)
                self.preflight.append(PreflightCall(usage, trace.faults, trace.retries))
                return text
            except LLMError as exc:
                self.preflight.append(PreflightCall(Usage(), exc.faults, exc.retries, str(exc)[:500]))
                message = str(exc).lower()
                if "max_tokens" in message and self.token_param == "max_tokens":
                    self.token_param = "max_completion_tokens"
                elif "temperature" in message and self.send_temperature:
                    self.send_temperature = False
                else:
                    raise
        raise LLMError("the endpoint refused the request's parameters")

    async def count_tokens(self, text: str) -> int | None:
        """`text` in the server's own tokens: llama.cpp's and vLLM's `/tokenize` (at the
        server's root, beside /v1). None where there is no such endpoint."""
        root = str(self.client.base_url).rstrip("/").removesuffix("/v1")
        bodies: list[dict[str, Any]] = [{"content": text}, {"model": self.model, "prompt": text}]
        client = self.client.with_options(timeout=10.0)
        for body in bodies:
            try:
                data = await client.post(f"{root}/tokenize", body=body, cast_to=object)
            except (openai.APIError, ValueError):
                continue
            if isinstance(data, dict):
                if isinstance(data.get("count"), int):
                    return int(data["count"])
                if isinstance(data.get("tokens"), list):
                    return len(data["tokens"])
        return None

    # -- calls ----------------------------------------------------------------------
    def _kwargs(self, max_tokens: int, temperature: float, seed: int | None) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.model, self.token_param: max_tokens}
        if self.send_temperature:
            kwargs["temperature"] = temperature
        if self.reasoning_effort:
            kwargs["reasoning_effort"] = self.reasoning_effort
        if seed is not None:
            kwargs["seed"] = seed
        if self.sampling:
            kwargs["extra_body"] = dict(self.sampling)
        return kwargs

    def _wire(
        self, messages: list[Message], schema: type[BaseModel] | None, mode: StructuredMode
    ) -> tuple[list[Message], Any]:
        if schema is None:
            return messages, None
        if mode in IN_PROMPT:
            return with_schema_in_prompt(messages, schema, self.decision_first), None
        return messages, wire_schema(schema, mode, self.decision_first)

    def wire(self, messages: list[Message], schema: type[BaseModel] | None) -> tuple[list[Message], Any]:
        return self._wire(messages, schema, self.mode)

    async def _create(
        self, messages: list[Message], kwargs: dict[str, Any], trace: _Trace
    ) -> tuple[str, str, Usage]:
        """One request, tried up to `policy.attempts` times on retryable faults; each try
        waits for the rate limiter, when there is one."""
        estimate = sum(len(m["content"]) for m in messages) // 4 + int(kwargs.get(self.token_param, 0))
        for attempt in range(1, self.policy.attempts + 1):
            sent = await self.limiter.acquire(estimate) if self.limiter is not None else None
            try:
                done = await post_chat(self.client, messages, kwargs)
                if sent is not None and self.limiter is not None:
                    self.limiter.settle(sent, done[2].total or estimate)
                return done
            except (openai.APIError, RetryableFault, ValueError) as exc:
                kind = r.classify(exc)
                if kind == r.RATE_LIMITED and self.limiter is not None:
                    self.limiter.rate_limited(r.retry_after(exc))
                detail = self.redact(f"{type(exc).__name__}: {exc}")[:300]
                if kind is None:
                    raise LLMError(detail, faults=trace.faults, retries=trace.retries, refused=True) from None
                trace.faults.append(kind)
                if attempt == self.policy.attempts:
                    raise LLMError(
                        f"gave up after {attempt} tries: {detail}", faults=trace.faults, retries=trace.retries
                    ) from None
                trace.retries += 1
                await asyncio.sleep(self.policy.delay(attempt, r.retry_after(exc), self._rng))
        raise AssertionError("unreachable")

    async def complete(self, request: Request) -> Completion:
        schema = request.schema
        kwargs = self._kwargs(request.max_tokens, request.temperature, request.seed)
        wire_messages, _ = self.wire(request.messages, schema)
        if schema is not None:
            fmt = response_format(schema, self.mode, self.decision_first)
            if fmt is not None:
                kwargs["response_format"] = fmt
        start = time.monotonic()
        trace = _Trace()
        text, finish, usage = await self._create(wire_messages, kwargs, trace)
        if schema is None:
            return Completion(
                text=text.strip(),
                usage=usage,
                latency_s=time.monotonic() - start,
                finish_reason=finish,
                retries=trace.retries,
                faults=trace.faults,
            )
        parsed, repair_usage = await self._structured(schema, wire_messages, kwargs, text, finish, trace)
        return Completion(
            text=json.dumps(parsed.model_dump(mode="json")),
            parsed=parsed,
            usage=usage + (repair_usage or Usage()),
            latency_s=time.monotonic() - start,
            finish_reason=finish,
            repaired=repair_usage is not None,
            retries=trace.retries,
            faults=trace.faults,
        )

    async def _structured(
        self,
        schema: type[BaseModel],
        messages: list[Message],
        kwargs: dict[str, Any],
        text: str,
        finish: str,
        trace: _Trace,
    ) -> tuple[BaseModel, Usage | None]:
        """The validated reply, and what repairing it cost (None: it was valid)."""
        try:
            return schema.model_validate_json(find_json(text)), None
        except ValidationError as first:
            trace.faults.append(r.TRUNCATED if finish == "length" else r.INVALID_JSON)
            salvaged = salvage(schema, text[max(0, text.find("{")) :]) if finish == "length" else None
            if salvaged is not None:
                return salvaged, Usage()  # repaired without another call
            # One repair retry that shows the model its own error.
            repair: list[Message] = [
                *messages,
                {"role": "assistant", "content": text[:2000]},
                {
                    "role": "user",
                    "content": "That reply is not valid JSON for the schema: "
                    f"{short_error(first)}. Reply again with only the JSON object.",
                },
            ]
            text, _, more = await self._create(repair, kwargs, trace)
            try:
                return schema.model_validate_json(find_json(text)), more
            except ValidationError as second:
                raise LLMError(
                    f"invalid structured output after repair: {short_error(second)}",
                    faults=trace.faults,
                    retries=trace.retries,
                    invalid_output=True,
                ) from second

    async def aclose(self) -> None:
        await self.client.close()
