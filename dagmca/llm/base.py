"""One async interface for every LLM backend."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import KW_ONLY, dataclass, field, replace
from functools import lru_cache
from typing import Annotated, Any, Protocol, TypedDict, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from dagmca.graph import Strict
from dagmca.llm.field_order import ordered_schema


class Message(TypedDict):
    role: str
    content: str


class Usage(Strict):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens the server served from its prompt cache

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
        )


class CallMeta(Strict):
    """Who makes a call and why: the keys every call is accounted by."""

    agent: str = ""
    debate: str = ""
    phase: str = ""
    omitted_chars: int = 0  # of quoted material, cut to fit the context window
    reask: bool = False  # asking again after a degenerate reply
    # the request's response-cache key, made once by the outermost layer of the stack
    # that needs it and read by those below (a hash of the whole request, not free)
    key: str = ""


@dataclass(frozen=True, slots=True)
class Request:
    """One call as every layer of the stack and every backend receives it. A layer that
    changes something passes on `dataclasses.replace(request, ...)` (or `with_meta`),
    never a Request rebuilt field by field, so a field it does not know reaches the
    backend as given.

    A frozen dataclass rather than a pydantic model: it is made by code on every call,
    and copied by layers, and its fields are typed already, so it is not validated.
    Equal when its fields are (the messages by content, the schema by class, the meta
    by value). Not hashable: the messages are a list of dicts; where a request needs an
    identity, the response cache's key (`Wrapper.key`) is it. A new field that changes
    the reply belongs in that key too (llm/cache.py), left out at its default so the
    keys of earlier runs still match."""

    messages: list[Message]
    _: KW_ONLY
    max_tokens: int
    schema: type[BaseModel] | None = None
    temperature: float = 0.0
    seed: int | None = None
    meta: CallMeta = field(default_factory=CallMeta)

    def with_meta(self, **changes: Any) -> Request:
        """This request with `changes` made to its meta."""
        return replace(self, meta=self.meta.model_copy(update=changes))


class Completion(BaseModel):
    """A reply: its text, the validated schema instance when the request gave a schema,
    its usage, and what it met on the way (retries, faults, a repair, a cut)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    text: str
    parsed: Any = None  # the validated schema instance when a schema was given
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    finish_reason: str = ""
    repaired: bool = False
    retries: int = 0  # tries beyond the first, repair excluded
    faults: list[str] = Field(default_factory=list)  # what went wrong on the way, by kind
    cache_hit: bool = False
    # why the text is degenerate (it loops, or echoes its prompt) after a re-ask; "" when sound
    degenerate: str = ""


class LLMError(Exception):
    """A call that failed after retries and repair. The pipeline degrades around it.

    `invalid_output`: the endpoint answered, but not with what the schema asks for, even
    after the repair try. That says nothing about whether the endpoint is up.
    `refused`: the endpoint refused the request as such (a 4xx), which another try will
    not change."""

    def __init__(
        self,
        message: str,
        *,
        faults: list[str] | None = None,
        retries: int = 0,
        invalid_output: bool = False,
        refused: bool = False,
    ) -> None:
        super().__init__(message)
        self.faults = faults or []
        self.retries = retries
        self.invalid_output = invalid_output
        self.refused = refused


@dataclass
class PreflightCall:
    """A request the pre-flight made (negotiating structured output): accounted as a
    call like any other."""

    usage: Usage
    faults: list[str]
    retries: int
    error: str = ""


class EndpointDown(Exception):
    """Calls keep failing after their retries: the endpoint is down, not flaky. Not an
    LLMError, because the run must stop (and be resumable) rather than degrade."""


S = TypeVar("S", bound=BaseModel)


@lru_cache(maxsize=256)
def json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """A schema class's JSON schema, built once (pydantic builds it anew on every call).
    Callers must not change it."""
    return schema.model_json_schema()


class Completer(Protocol):
    """What answers a request: a backend, a session's metered client, any layer of the
    stack; what code that only asks (a judge, a swarm's agents) is given."""

    async def complete(self, request: Request) -> Completion: ...


class LLMClient(ABC):
    """`complete(request) -> Completion`: every backend and every layer of the stack
    takes one Request (its messages, schema, output cap, sampling and meta)."""

    model: str
    # how structured output is obtained (the pre-flight may negotiate it; see structured.py)
    structured_mode: str = "native"
    # the context window the endpoint reported at the pre-flight, if it did
    reported_context_window: int | None = None
    # sampling parameters sent with every request beyond temperature and seed (llama.cpp's
    # repeat penalty, DRY): part of what a reply depends on
    sampling: dict[str, float] = {}  # noqa: RUF012 - never mutated, replaced per instance
    # the bundled 135M model's concession: schemas sent as declared, decisive fields first,
    # so a reply cut at its cap still carries them; every other model gets the evidence
    # before the decision (llm/field_order.py)
    decision_first: bool = False

    def wire(self, messages: list[Message], schema: type[BaseModel] | None) -> tuple[list[Message], Any]:
        """The messages and the schema as this backend sends them: what a reply depends
        on, so what the response cache keys on."""
        return messages, ordered_schema(schema, self.decision_first) if schema is not None else None

    async def count_tokens(self, text: str) -> int | None:
        """`text` in the endpoint's own tokens, where it can say (None: it cannot)."""
        return None

    def preflight_calls(self) -> list[PreflightCall]:
        """The requests the pre-flight made (to be accounted as calls)."""
        return []

    def negotiation_result(self) -> str | None:
        """The structured-output mode this pre-flight settled on by asking, if it did."""
        return None

    def negotiated_key(self) -> str | None:
        """Where the structured-output mode the pre-flight negotiates is remembered (a
        key of the response cache), so a repeated run asks nothing; None: nothing to
        negotiate."""
        return None

    def use_structured_mode(self, mode: str) -> None:  # noqa: B027 - optional hook
        """Take a mode negotiated before, instead of negotiating."""

    @abstractmethod
    async def complete(self, request: Request) -> Completion: ...

    async def ping(self) -> None:  # noqa: B027 - optional hook, default: nothing to check
        """Pre-flight: raise if the endpoint or model cannot be used."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook
        """Release connections."""


def _clip(limit: int) -> Any:
    def clip(value: Any) -> Any:
        return value[:limit] if isinstance(value, str) else value

    return clip


def _clamp01(value: Any) -> Any:
    # Grammar-constrained decoding does not enforce numeric bounds (an urgency
    # of 27186 was seen from the local model), so clamp rather than reject.
    if isinstance(value, int | float) and not isinstance(value, bool):
        return min(1.0, max(0.0, float(value)))
    return value


def Text(limit: int) -> Any:
    """A string field capped at `limit` characters, in the schema and in validation."""
    return Annotated[
        str,
        BeforeValidator(_clip(limit)),
        WithJsonSchema({"type": "string", "maxLength": limit}),
    ]


Unit = Annotated[
    float,
    BeforeValidator(_clamp01),
    WithJsonSchema({"type": "number", "minimum": 0, "maximum": 1}),
]

# A 0-1 score offered as an enum: grammar-constrained servers enforce enums (they do
# not enforce minimum/maximum), so even a tiny model returns a usable value.
UNIT_STEPS = [round(i / 10, 1) for i in range(11)]
UnitStep = Annotated[
    float,
    BeforeValidator(_clamp01),
    WithJsonSchema({"type": "number", "enum": UNIT_STEPS}),
]
