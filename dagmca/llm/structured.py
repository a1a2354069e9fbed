"""Structured output on any OpenAI-compatible endpoint.

There are four ways to ask for JSON. The session tries them once, at the pre-flight,
best first, and uses the first the endpoint accepts and answers with valid JSON:

- `json_schema_strict`: response_format json_schema, strict, with the schema's
  keywords strict mode rejects (lengths, bounds, formats) left out: pydantic still
  enforces them when the reply is validated;
- `json_schema`: the same, not strict, the whole schema (llama.cpp turns it into a
  grammar, so even a tiny model keeps to it);
- `json_object`: response_format json_object, the schema in the prompt;
- `text`: no response_format, the schema in the prompt, the JSON found in the reply.

Whatever the mode, a reply is validated with pydantic and gets one repair try.
"""

from __future__ import annotations

import copy
import json
from enum import StrEnum
from functools import lru_cache
from typing import Any

import jiter
from pydantic import BaseModel, ValidationError

from dagmca.llm.base import Message
from dagmca.llm.field_order import ordered_schema


class StructuredMode(StrEnum):
    STRICT = "json_schema_strict"
    SCHEMA = "json_schema"
    OBJECT = "json_object"
    TEXT = "text"


MODES = tuple(StructuredMode)
IN_PROMPT = (StructuredMode.OBJECT, StructuredMode.TEXT)

# JSON-schema keywords strict structured outputs reject or ignore.
STRICT_UNSUPPORTED = frozenset(
    {
        "minLength", "maxLength", "pattern", "format",
        "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties",
        "patternProperties", "default",
    }
)  # fmt: skip
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions")


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as strict mode takes it: unsupported keywords dropped (never a
    property of that name), every object closed and every property required."""

    def walk(node: Any) -> Any:
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in STRICT_UNSUPPORTED:
                continue
            if key in _SUBSCHEMA_MAPS and isinstance(value, dict):
                out[key] = {name: walk(sub) for name, sub in value.items()}
            elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
                out[key] = [walk(sub) for sub in value]
            elif key in ("items", "not", "additionalProperties") and isinstance(value, dict):
                out[key] = walk(value)
            else:
                out[key] = copy.deepcopy(value)
        if out.get("type") == "object" and isinstance(out.get("properties"), dict):
            out["required"] = list(out["properties"])
            out["additionalProperties"] = False
        return out

    result: dict[str, Any] = walk(schema)
    return result


@lru_cache(maxsize=256)
def wire_schema(
    schema: type[BaseModel], mode: StructuredMode, decision_first: bool = False
) -> dict[str, Any] | None:
    """The schema as it goes in `response_format`, its evidence before its decision
    unless `decision_first` (the bundled model's concession, field_order.py); None when
    it goes in the prompt. Built once per schema, mode and order (every call sends it,
    and the cache key hashes it); callers must not change it."""
    full = ordered_schema(schema, decision_first)
    if mode is StructuredMode.STRICT:
        return strict_schema(full)
    if mode is StructuredMode.SCHEMA:
        return full
    return None


def response_format(
    schema: type[BaseModel], mode: StructuredMode, decision_first: bool = False
) -> dict[str, Any] | None:
    if mode is StructuredMode.TEXT:
        return None
    if mode is StructuredMode.OBJECT:
        return {"type": "json_object"}
    return {
        "type": "json_schema",
        "json_schema": {
            "name": schema.__name__,
            "schema": wire_schema(schema, mode, decision_first),
            "strict": mode is StructuredMode.STRICT,
        },
    }


SCHEMA_INSTRUCTION = (
    "Reply with only one JSON object that matches this JSON schema, with no other text before or after it:"
)


def with_schema_in_prompt(
    messages: list[Message], schema: type[BaseModel], decision_first: bool = False
) -> list[Message]:
    """The messages with the schema stated at the end of the last one (modes that
    cannot send it in `response_format`), its properties in the order they are to be
    written (not sorted: that would put `category` before `excerpt`)."""
    text = json.dumps(ordered_schema(schema, decision_first), ensure_ascii=False)
    out = [dict(m) for m in messages]
    out[-1]["content"] = f"{out[-1]['content']}\n\n{SCHEMA_INSTRUCTION}\n```json\n{text}\n```"
    return out  # type: ignore[return-value]


def find_json(text: str) -> str:
    """The JSON object in a reply that may wrap it in prose or a code fence: from the
    first `{` to the last `}` (the reply itself when there is none)."""
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else text.strip()


def salvage(schema: type[BaseModel], text: str) -> BaseModel | None:
    """A reply cut off by max_tokens: parse what arrived (trailing string kept)."""
    try:
        data = jiter.from_json(text.encode(), partial_mode="trailing-strings")
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    # Text fields the cut-off never reached are empty, not missing.
    for name, prop in schema.model_json_schema().get("properties", {}).items():
        if prop.get("type") == "string" and "enum" not in prop:
            data.setdefault(name, "")
    try:
        return schema.model_validate(data)
    except ValidationError:
        return None


def short_error(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()[:3])
