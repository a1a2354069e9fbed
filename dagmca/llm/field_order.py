"""The order of a structured reply's fields: evidence before the decision.

A model writes a JSON reply in the order its schema lists the properties. Under
constrained decoding, a verdict written first is a commitment the reasons that follow
can only rationalise; written after its reasons, it rests on them. So every schema is
sent with each evidence property (a reason, rationale, excerpt, quoted sentence) before
any decision property (a verdict, urgency, category, action, vote), whatever order its
class declares, at every nesting level. The rule goes by property names, so a schema
added anywhere is covered without declaring anything.

The one concession: the bundled SmolLM2-135M runs out of tokens mid-reply, and a cut
reply is parsed as far as it got (structured.salvage). For that model alone
(`LLMClient.decision_first`) schemas go as their classes declare them, decisive fields
first, so a cut reply still carries its verdict.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

# what a property is, by its name (snake_case words): evidence a decision rests on ...
EVIDENCE = re.compile(
    r"(?:^|_)(?:reasons?|reasoning|rationale|excerpts?|sentences?|quotes?|evidence|justification|note)(?:$|_)"
)
# ... and the decision itself
DECISION = re.compile(
    r"(?:^|_)(?:verdict|urgency|category|action|vote|vote_for|satisfaction|signal|score)(?:$|_)"
)


def is_evidence(name: str) -> bool:
    return EVIDENCE.search(name) is not None


def is_decision(name: str) -> bool:
    return DECISION.search(name) is not None and not is_evidence(name)


def _reordered(properties: dict[str, Any]) -> dict[str, Any]:
    """Decision properties moved after the last evidence property (each group keeps its
    order; the others keep their places)."""
    names = list(properties)
    evidence = [i for i, n in enumerate(names) if is_evidence(n)]
    if not evidence:
        return properties
    last = evidence[-1]
    early = [n for n in names[:last] if is_decision(n)]
    if not early:
        return properties
    rest = [n for n in names if n not in early]
    at = rest.index(names[last]) + 1
    order = [*rest[:at], *early, *rest[at:]]
    return {n: properties[n] for n in order}


def evidence_first(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON schema with every object's evidence properties before its decision ones
    (and `required` in the same order); the rest unchanged. A new dict: `schema` is
    left as it is."""

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: walk(value) for key, value in node.items()}
        props = out.get("properties")
        if isinstance(props, dict) and all(isinstance(k, str) for k in props):
            out["properties"] = _reordered(props)
            required = out.get("required")
            if isinstance(required, list):
                place = {name: i for i, name in enumerate(out["properties"])}
                out["required"] = sorted(required, key=lambda n: place.get(n, len(place)))
        return out

    result: dict[str, Any] = walk(schema)
    return result


@lru_cache(maxsize=256)
def ordered_schema(schema: type[BaseModel], decision_first: bool) -> dict[str, Any]:
    """The JSON schema of `schema` as it is sent: evidence first, or, for the bundled
    model's concession (`decision_first`), as declared. Built once per schema and order;
    callers must not change it."""
    declared = schema.model_json_schema()
    return declared if decision_first else evidence_first(declared)


def violations(schema: dict[str, Any]) -> list[tuple[str, str]]:
    """(decision, evidence) property pairs of any object of `schema` where the decision
    comes first: what a schema sent to a model other than the bundled one never has."""
    found: list[tuple[str, str]] = []

    def walk(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item)
            return
        if not isinstance(node, dict):
            return
        props = node.get("properties")
        if isinstance(props, dict):
            seen: list[str] = []
            for name in props:
                if is_evidence(name):
                    found.extend((d, name) for d in seen if is_decision(d))
                seen.append(name)
        for value in node.values():
            walk(value)

    walk(schema)
    return found
