"""A scripted fake LLM for tests: the same interface, no network, deterministic."""

from __future__ import annotations

import asyncio
import hashlib
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pydantic import BaseModel, ValidationError

from dagmca.llm.base import CallMeta, Completion, LLMClient, LLMError, Message, Request, Usage


@dataclass
class ScriptedCall:
    messages: list[Message]
    schema: type[BaseModel] | None
    meta: CallMeta
    max_tokens: int
    request: Request | None = None  # as the fake received it (None: a call made up by a test)

    @property
    def prompt(self) -> str:
        return "\n".join(m["content"] for m in self.messages)


Reply = str | BaseModel | dict[str, Any] | None
Responder = Callable[[ScriptedCall], Reply]

_WORDS = [
    "freedom",
    "constraint",
    "market",
    "attention",
    "fairness",
    "evidence",
    "harm",
    "duty",
    "trust",
    "power",
    "language",
    "meaning",
    "risk",
    "value",
    "scale",
    "feedback",
    "memory",
    "identity",
    "law",
    "culture",
]


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def _words(seed: str, n: int) -> str:
    d = _digest(seed)
    return " ".join(_WORDS[b % len(_WORDS)] for b in d[:n])


def _fill(annotation: Any, seed: str) -> Any:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _fill(args[0], seed)
    if origin is typing.Literal:
        return args[0]
    if origin in (typing.Union, types.UnionType):
        return _fill(next(a for a in args if a is not type(None)), seed)
    if origin is list:
        item = typing.get_args(args[0])[0] if typing.get_origin(args[0]) is typing.Annotated else args[0]
        choices = _first_literal(item)
        if choices:  # a list of items told apart by a choice (observers' flags by lens): one each
            name, values = choices
            return [{**_fill(item, seed + str(v)), name: v} for v in values]
        return [_fill(args[0], seed + str(i)) for i in range(2)]
    if isinstance(annotation, type):
        if issubclass(annotation, bool):
            return True
        if issubclass(annotation, Enum):
            members = list(annotation)
            return members[_digest(seed)[0] % len(members)].value
        if issubclass(annotation, float):
            return round(0.35 + (_digest(seed)[1] % 60) / 100, 2)
        if issubclass(annotation, int):
            return 1
        if issubclass(annotation, BaseModel):
            return default_structured(annotation, seed)
    return f"{_words(seed, 6)}?"


def _first_literal(item: Any) -> tuple[str, tuple[Any, ...]] | None:
    """A model's first field, when it is a choice (Literal): its name and choices."""
    if not (isinstance(item, type) and issubclass(item, BaseModel)) or not item.model_fields:
        return None
    name, field = next(iter(item.model_fields.items()))
    if typing.get_origin(field.annotation) is typing.Literal:
        return name, typing.get_args(field.annotation)
    return None


def default_structured(schema: type[BaseModel], seed: str) -> dict[str, Any]:
    """A valid, deterministic instance of any output schema, varied by `seed`. An
    observer's excerpt is quoted from the turn it checks (the seed is the prompt), as
    a flag whose excerpt is not in its turn is discarded."""
    out = {name: _fill(f.annotation, seed + name) for name, f in schema.model_fields.items()}
    if "excerpt" in out:
        out["excerpt"] = checked_excerpt(seed, out.get("turn", 1))
    return out


_CHECKED = re.compile(
    r"(?:The turn to check|Turn to check (\d+)|Turn (\d+)) \(.*?\):\n<turn>\n(.*?)\n</turn>", re.S
)


def checked_excerpt(prompt: str, turn: int = 1) -> str:
    """The first words of turn `turn` an observer prompt asks to check ("" if none)."""
    for found in _CHECKED.finditer(prompt):
        number = int(found.group(1) or found.group(2) or 1)
        if number == turn:
            quoted = re.sub(r"^\[…[^\]]*…\]", "", found.group(3).strip())  # a cut turn's mark
            return " ".join(quoted.split()[:8])
    return ""


# what the debate's prompts ask a reply to end with, or to be written in (prompts/lines.py;
# the llm layer cannot import it): the fake follows them, so tests exercise the parsing
PARTS_ASKED = "Write it in four labelled parts"
STANCE_ASKED = "'Stance: kept'"
ANSWER_ASKED = "End with two lines: 'Answer:'"
ANSWERS = ("yes", "no")
_AGENT = re.compile(r"\bL\d+N\d+\b")


def _others(call: ScriptedCall) -> list[str]:
    """The agents a prompt names, other than the one asked, in order of first mention."""
    return [a for a in dict.fromkeys(_AGENT.findall(call.prompt)) if a != call.meta.agent] or ["L1N1", "L1N2"]


def parts_reply(call: ScriptedCall, position: str) -> str:
    """A root output in the labelled parts the root's prompts ask for."""
    seed = call.prompt
    a, b = (_others(call) * 2)[:2]
    return (
        f"Position: {position}\n"
        f"Disagreements:\n- {a} vs {b}: {_words(seed + 'd', 8)}.\n"
        f"Agreements:\n- {a} and {b} agree on {_words(seed + 'a', 6)}.\n"
        f"Inferences:\n- From {a} and {b}: {_words(seed + 'i', 8)}."
    )


def closing_lines(call: ScriptedCall, text: str) -> str:
    """`text` with the stance and answer lines the prompt asks for: an agent keeps one
    answer (chosen by its name) in every round."""
    if STANCE_ASKED in call.prompt:
        text += f"\nStance: revised because {_others(call)[0]}'s point on {_words(call.prompt, 2)} holds."
    if ANSWER_ASKED in call.prompt:
        choice = ANSWERS[_digest(call.meta.agent or "agent")[0] % len(ANSWERS)]
        text += f"\nAnswer: {choice}\nConfidence: 0.{5 + _digest(call.prompt)[0] % 5}"
    return text


def default_responder(call: ScriptedCall) -> Reply:
    seed = call.prompt
    if call.schema is not None:
        return default_structured(call.schema, seed)
    text = f"{call.meta.agent or 'agent'} ({call.meta.phase}): {_words(seed, 12)}."
    if PARTS_ASKED in call.prompt:
        return parts_reply(call, text)
    return closing_lines(call, text)


class ScriptedLLM(LLMClient):
    """Answers every call with `responder(call)`; records every call.

    A responder returning None makes the call fail (LLMError), for fault paths.
    `delay` makes each call take that long (a number, or a function of the call for
    varied latency), for concurrency and determinism tests. `caps`: a plain reply longer
    than `max_tokens` words is cut there and ends with finish reason "length", as a real
    endpoint's would.
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        delay: float | Callable[[ScriptedCall], float] = 0.0,
        model: str = "scripted",
        caps: bool = False,
    ) -> None:
        self.responder = responder or default_responder
        self.delay = delay
        self.caps = caps
        self.model = model
        self.calls: list[ScriptedCall] = []
        self.in_flight = 0
        self.max_in_flight = 0

    async def complete(self, request: Request) -> Completion:
        schema, max_tokens = request.schema, request.max_tokens
        call = ScriptedCall(list(request.messages), schema, request.meta, max_tokens, request)
        self.calls.append(call)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            wait = self.delay(call) if callable(self.delay) else self.delay
            if wait:
                await asyncio.sleep(wait)
            reply = self.responder(call)
        finally:
            self.in_flight -= 1
        if reply is None:
            raise LLMError("scripted failure")
        usage = Usage(prompt_tokens=len(call.prompt.split()), completion_tokens=0)
        if schema is None:
            text = reply if isinstance(reply, str) else str(reply)
            finish = "stop"
            starts = [m.start() for m in re.finditer(r"\S+", text)]
            if self.caps and len(starts) > max_tokens:
                text, finish = text[: starts[max_tokens]].rstrip(), "length"
            usage.completion_tokens = len(text.split())
            return Completion(text=text, usage=usage, finish_reason=finish)
        data = reply.model_dump() if isinstance(reply, BaseModel) else reply
        try:
            parsed = schema.model_validate(data)
        except ValidationError as exc:  # as a real backend does after its repair try
            raise LLMError(f"scripted reply does not fit {schema.__name__}") from exc
        text = parsed.model_dump_json()
        usage.completion_tokens = len(text.split())
        return Completion(text=text, parsed=parsed, usage=usage, finish_reason="stop")
