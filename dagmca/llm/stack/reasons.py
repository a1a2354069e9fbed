"""Judged reasons that say nothing: asked again once, then kept marked.

A judged decision (a merge verdict, a stub check, a ledger verdict, an evaluation's
verdict) is trusted for its reason. A reason under three words, or one that copies the
schema's or the prompt's description of the field ("one sentence"), is no reason: the
call is asked again once, with varied sampling, as a degenerate turn is; a reply whose
reason still says nothing comes back marked (`Completion.degenerate`), for the caller
to store marked. The rule reads the reply's reason-like fields by name, whatever the
schema, so every judged schema is covered."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from dagmca.llm.base import Completion, LLMError, Message, Request
from dagmca.llm.degenerate import REASK_TEMPERATURE, field_descriptions, reason_degeneration, scaffolding
from dagmca.llm.stack.base import Wrapper

REASON_FIELDS = frozenset({"reason", "reasons", "reasoning", "rationale"})


def reasons_of(parsed: Any) -> list[tuple[str, str]]:
    """The (field, text) of every reason-like string field of a validated reply, at any
    depth (a list of criteria, a union's chosen member)."""
    found: list[tuple[str, str]] = []

    def walk(value: Any) -> None:
        if isinstance(value, BaseModel):
            for name in type(value).model_fields:
                item = getattr(value, name)
                if name in REASON_FIELDS and isinstance(item, str):
                    found.append((name, item))
                else:
                    walk(item)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)

    walk(parsed)
    return found


def descriptions(schema: dict[str, Any]) -> list[str]:
    """Every description a JSON schema carries (its fields' and its classes')."""
    out: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            text = node.get("description")
            if isinstance(text, str):
                out.append(text)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return out


def hollow_reason(parsed: Any, messages: list[Message], schema: type[BaseModel]) -> str | None:
    """Why a reply's reasons say nothing (the first such field), or None."""
    fields = reasons_of(parsed)
    if not fields:
        return None
    prompt = scaffolding(messages)  # the prompt's own words: a passage is no description
    described = descriptions(schema.model_json_schema())
    described += field_descriptions(prompt, sorted({name for name, _ in fields}))
    for name, text in fields:
        why = reason_degeneration(text, described)
        if why is not None:
            return f"its {name} {why}"
    return None


class Reasons(Wrapper):
    """Structured replies with a hollow reason are asked again once (a re-ask, with a
    higher temperature and another seed, so a cached first reply is not the answer
    again); one still hollow is returned marked degenerate. A failed re-ask leaves the
    first reply, marked. Plain replies pass as they are."""

    async def complete(self, request: Request) -> Completion:
        done = await self.inner.complete(request)
        schema, messages = request.schema, request.messages
        if schema is None or done.parsed is None:
            return done
        why = hollow_reason(done.parsed, messages, schema)
        if why is None:
            return done
        reask = replace(
            request,
            temperature=max(REASK_TEMPERATURE, request.temperature),
            seed=(request.seed or 0) + 1,
            meta=request.meta.model_copy(update={"reask": True, "key": ""}),
        )
        try:
            again = await self.inner.complete(reask)
        except LLMError:  # the first reply stands, marked: the call itself succeeded
            return done.model_copy(update={"degenerate": why})
        still = hollow_reason(again.parsed, messages, schema) if again.parsed is not None else why
        return again if still is None else again.model_copy(update={"degenerate": still})
