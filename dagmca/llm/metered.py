"""Around any LLMClient: the session's one concurrency limit, the response cache,
accounting, budgets, and the judgement that the endpoint is down."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from dagmca.llm.base import CallMeta, Completion, EndpointDown, LLMClient, LLMError, Message, Usage
from dagmca.llm.cache import ResponseCache, cache_key, decode, encode
from dagmca.llm.degenerate import loop_reason
from dagmca.llm.gate import Gate
from dagmca.llm.prices import Prices
from dagmca.models import CallPhase, CallRecord


@dataclass
class Budget:
    max_calls: int | None = None
    max_tokens: int | None = None
    max_cost_usd: float | None = None

    def broken_by(self, calls: int, tokens: int, cost: float, reserve_calls: int) -> bool:
        """Whether `reserve_calls` more calls, each like the average so far, would
        reach a limit after what was spent (`calls`, `tokens`, `cost`)."""
        tokens_each, cost_each = (tokens / calls, cost / calls) if calls else (0.0, 0.0)
        return (
            (self.max_calls is not None and calls + reserve_calls >= self.max_calls)
            or (self.max_tokens is not None and tokens + reserve_calls * tokens_each >= self.max_tokens)
            or (self.max_cost_usd is not None and cost + reserve_calls * cost_each >= self.max_cost_usd)
        )


@dataclass
class Pool:
    """What every session of a build spent together: the same budgets bound the whole
    build as well as each session."""

    budget: Budget
    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0

    def over(self, reserve_calls: int) -> bool:
        return self.budget.broken_by(self.calls, self.tokens, self.cost_usd, reserve_calls)


PREFLIGHT = "pre-flight"  # the agent of the calls that negotiate with the endpoint


class BudgetExhausted(LLMError):
    """A call refused because a budget is spent: a skipped turn, not a lost run."""


@dataclass
class Meter:
    calls: int = 0  # requests actually made (cache hits excluded)
    failures: int = 0
    repairs: int = 0
    retries: int = 0
    cache_hits: int = 0
    refused: int = 0  # calls a budget did not allow
    invalid_outputs: int = 0  # calls answered, but not with valid structured output, even after repair
    faults: Counter[str] = field(default_factory=Counter)
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    # what earlier runs of this session spent, as far as it is charged so far (resume,
    # revisit): budgets count it, the figures of this run above do not
    earlier_calls: int = 0
    earlier_tokens: int = 0
    earlier_cost_usd: float = 0.0
    # the pre-flight's share of calls, usage and cost above: each run's fixed overhead, so
    # budgets (which bound the session's work) leave it out
    preflight_calls: int = 0
    preflight_tokens: int = 0
    preflight_cost_usd: float = 0.0

    def charge_earlier(self, record: CallRecord) -> None:
        self.earlier_calls += 1
        self.earlier_tokens += record.prompt_tokens + record.completion_tokens
        self.earlier_cost_usd += record.cost_usd


class MeteredLLM(LLMClient):
    """One concurrency gate for the whole session (llm/gate.py): every call, nested ones
    included, passes it.

    With a `cache`, a request seen before is answered from it without a call (unless
    `read_cache` is off); every successful reply is written to it either way, so a
    run started with --no-cache can still be resumed. `record` receives one
    CallRecord per call, hits included. After `down_after` calls in a row fail (each
    after its retries), EndpointDown stops the run instead of degrading it further.
    `continue_cut`: a plain reply cut at its cap is continued once (endpoints); off, it
    is only marked (the local model: its calls stay what the protocol's formula says).
    """

    def __init__(
        self,
        inner: LLMClient,
        *,
        concurrency: int,
        budget: Budget | None = None,
        prices: Prices | None = None,
        cache: ResponseCache | None = None,
        read_cache: bool = True,
        record: Callable[[CallRecord], None] | None = None,
        session: str = "",
        down_after: int = 8,
        continue_cut: bool = True,
        gate: Gate | None = None,
        pool: Pool | None = None,
    ) -> None:
        self.inner = inner
        self.model = inner.model
        # `gate`: shared with other sessions (a build's one concurrency limit)
        self._gate = gate or Gate(concurrency)
        self.pool = pool
        self.budget = budget or Budget()
        self.prices = prices or Prices()
        self.cache = cache
        self.read_cache = read_cache
        self.record = record
        self.session = session
        self.down_after = down_after
        self.continue_cut = continue_cut
        self.meter = Meter()
        self.budget_hit = False  # some work was skipped or refused for a budget
        self._failures_in_a_row = 0
        self._replays: dict[str, list[CallRecord]] = {}

    def restore(self, earlier: list[CallRecord], *, replayed: bool) -> None:
        """The spend of this session's earlier runs, from their call records, so a budget
        is the session's and not each run's. `replayed` (resume): a call is charged when
        the cache replays it, as it was when it was made, so the resumed run meets its
        budget at the same step as an uninterrupted one would; what is never replayed
        (failed calls) is charged now. Otherwise (revisit: new work after the old)
        everything is charged now. Pre-flight calls are each run's overhead, not the
        session's work: no budget counts them."""
        for record in earlier:
            if record.cache_hit or record.agent == PREFLIGHT:
                continue  # no call was made, or not one a budget counts
            if replayed and record.key and not record.error:
                self._replays.setdefault(record.key, []).append(record)
            else:
                self.meter.charge_earlier(record)

    # -- budgets -------------------------------------------------------------------
    def exhausted(self, reserve_calls: int = 0) -> bool:
        """True when starting work of `reserve_calls` more calls would break a budget,
        projected from the average call so far (this session's, earlier runs included).
        Saying so marks the session as having hit its budget."""
        m = self.meter
        calls = m.calls - m.preflight_calls + m.earlier_calls
        tokens = m.usage.total - m.preflight_tokens + m.earlier_tokens
        cost = m.cost_usd - m.preflight_cost_usd + m.earlier_cost_usd
        over = self.budget.broken_by(calls, tokens, cost, reserve_calls)
        over = over or (self.pool is not None and self.pool.over(reserve_calls))
        self.budget_hit = self.budget_hit or over
        return over

    def _allowed(self, meta: CallMeta) -> bool:
        # The final integration is always allowed; anything else must leave room for it.
        return meta.phase == CallPhase.FINAL or not self.exhausted(reserve_calls=2)

    # -- calls ---------------------------------------------------------------------
    async def complete(
        self,
        messages: list[Message],
        *,
        schema: type[BaseModel] | None = None,
        max_tokens: int,
        temperature: float = 0.0,
        seed: int | None = None,
        meta: CallMeta | None = None,
    ) -> Completion:
        meta = meta or CallMeta()
        wire_messages, wire_schema = self.inner.wire(messages, schema)
        key = cache_key(
            self.model, wire_messages, wire_schema, max_tokens, temperature, seed, self.inner.sampling
        )
        if self.cache is not None and self.read_cache:
            raw = await self.cache.acache_get(key)
            hit = decode(raw, schema) if raw is not None else None
            if hit is not None:
                self.meter.cache_hits += 1
                replay = self._replays.get(key)
                if replay:  # an earlier run of this session paid for it
                    self.meter.charge_earlier(replay.pop(0))
                self._record(meta, key, hit)
                return hit
        async with self._gate:
            # Checked inside the gate, so calls queued behind it see what the
            # calls before them spent.
            if not self._allowed(meta):
                self.meter.refused += 1
                raise BudgetExhausted("budget spent: call skipped")
            self.meter.calls += 1
            try:
                result = await self.inner.complete(
                    messages,
                    schema=schema,
                    max_tokens=max_tokens,
                    temperature=temperature,
                    seed=seed,
                    meta=meta,
                )
                result = await self._finish(result, messages, schema, max_tokens, temperature, seed, meta)
            except LLMError as exc:
                self._failed(meta, key, exc)
                raise
        self._failures_in_a_row = 0
        m = self.meter
        m.usage = m.usage + result.usage
        m.cost_usd += self.prices.cost(result.usage)
        m.repairs += int(result.repaired)
        m.retries += result.retries
        m.faults.update(result.faults)
        if self.pool is not None:
            self.pool.calls += 1
            self.pool.tokens += result.usage.total
            self.pool.cost_usd += self.prices.cost(result.usage)
        if self.cache is not None:
            self.cache.cache_put(key, self.model, encode(result))
        self._record(meta, key, result)
        return result

    async def _finish(
        self,
        result: Completion,
        messages: list[Message],
        schema: type[BaseModel] | None,
        max_tokens: int,
        temperature: float,
        seed: int | None,
        meta: CallMeta,
    ) -> Completion:
        """A plain reply its output cap cut short is continued once (one more request),
        unless it was looping, which more of would not mend; a reply still cut is stored
        with a visible mark, never as if it were whole."""
        if schema is not None or result.finish_reason != "length":
            return result
        if not self.continue_cut:  # marked, not continued: the call count stays the formula's
            return result.model_copy(
                update={"text": result.text.rstrip() + " […]", "faults": [*result.faults, "cut_at_cap"]}
            )
        text, usage, finish, faults = result.text, result.usage, result.finish_reason, list(result.faults)
        retries = result.retries
        if loop_reason(text) is None:
            cap = max(32, max_tokens // 2)
            follow: list[Message] = [
                *messages,
                {"role": "assistant", "content": text},
                {
                    "role": "user",
                    "content": "Your reply was cut off at the length limit. Continue it exactly where it "
                    "stopped, without repeating anything or starting over, and finish within "
                    f"{max(10, int(cap * 0.6))} words.",
                },
            ]
            self.meter.calls += 1
            try:
                more = await self.inner.complete(
                    follow, max_tokens=cap, temperature=temperature, seed=seed, meta=meta
                )
            except LLMError as exc:  # the reply stands, marked; what the try met is counted
                more = None
                retries, faults = retries + exc.retries, [*faults, *exc.faults]
            if more is not None:
                retries, faults = retries + more.retries, [*faults, *more.faults]
            rest = more.text.rstrip() if more is not None else ""
            if more is not None and rest.strip():
                joiner = "" if text[-1:].isspace() or rest[:1].isspace() or rest[:1] in ",.;:" else " "
                text, usage, finish = text + joiner + rest, usage + more.usage, more.finish_reason
        if finish == "length":
            text, faults = text.rstrip() + " […]", [*faults, "cut_at_cap"]
        return result.model_copy(
            update={
                "text": text,
                "usage": usage,
                "finish_reason": finish,
                "faults": faults,
                "retries": retries,
            }
        )

    def _failed(self, meta: CallMeta, key: str, exc: LLMError) -> None:
        m = self.meter
        m.failures += 1
        m.retries += exc.retries
        m.faults.update(exc.faults)
        if exc.invalid_output:
            # The endpoint answered, just not in the shape asked for: not a sign it is down.
            m.invalid_outputs += 1
            self._emit(
                self._call_record(meta, key, retries=exc.retries, faults=exc.faults, error=str(exc)[:500])
            )
            return
        self._failures_in_a_row += 1
        self._emit(self._call_record(meta, key, retries=exc.retries, faults=exc.faults, error=str(exc)[:500]))
        if self._failures_in_a_row >= self.down_after:
            raise EndpointDown(
                f"the LLM endpoint failed {self._failures_in_a_row} calls in a row, each after its retries "
                f"(last: {str(exc)[:200]})"
            )

    def _record(self, meta: CallMeta, key: str, done: Completion) -> None:
        u = done.usage
        self._emit(
            self._call_record(
                meta,
                key,
                prompt_tokens=u.prompt_tokens,
                completion_tokens=u.completion_tokens,
                cached_tokens=u.cached_tokens,
                latency_s=round(done.latency_s, 4),
                cache_hit=done.cache_hit,
                retries=done.retries,
                faults=list(done.faults),
                repaired=done.repaired,
                cost_usd=0.0 if done.cache_hit else round(self.prices.cost(u), 8),
            )
        )

    def _call_record(self, meta: CallMeta, key: str, **fields: Any) -> CallRecord:
        return CallRecord(
            session=self.session,
            agent=meta.agent,
            debate=meta.debate,
            phase=meta.phase,
            omitted_chars=meta.omitted_chars,
            reask=meta.reask,
            model=self.model,
            key=key,
            **fields,
        )

    def _emit(self, record: CallRecord) -> None:
        if self.record is not None:
            self.record(record)

    async def ping(self) -> None:
        """The inner pre-flight; a structured-output mode negotiated by an earlier run
        against the same endpoint and model is taken from the cache, not asked again."""
        key = self.inner.negotiated_key()
        remembered = await self.cache.acache_get(key) if key and self.cache and self.read_cache else None
        if remembered:
            self.inner.use_structured_mode(remembered)
        await self.inner.ping()
        for call in self.inner.preflight_calls():  # what negotiating cost, accounted
            m = self.meter
            m.calls += 1
            m.usage = m.usage + call.usage
            m.cost_usd += self.prices.cost(call.usage)
            m.preflight_calls += 1
            m.preflight_tokens += call.usage.total
            m.preflight_cost_usd += self.prices.cost(call.usage)
            m.retries += call.retries
            m.faults.update(call.faults)
            u = call.usage
            self._emit(
                self._call_record(
                    CallMeta(agent=PREFLIGHT, phase="negotiate"),
                    "",
                    prompt_tokens=u.prompt_tokens,
                    completion_tokens=u.completion_tokens,
                    retries=call.retries,
                    faults=list(call.faults),
                    error=call.error,
                    cost_usd=round(self.prices.cost(u), 8),
                )
            )
        settled = self.inner.negotiation_result()
        if key and settled and self.cache is not None:
            self.cache.cache_put(key, self.model, settled)
        # what the pre-flight found out about the endpoint
        self.structured_mode = self.inner.structured_mode
        self.reported_context_window = self.inner.reported_context_window

    def wire(self, messages: list[Message], schema: type[BaseModel] | None) -> tuple[list[Message], Any]:
        return self.inner.wire(messages, schema)

    async def count_tokens(self, text: str) -> int | None:
        return await self.inner.count_tokens(text)

    async def aclose(self) -> None:
        await self.inner.aclose()
