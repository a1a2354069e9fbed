"""Output schemas of structured calls. Strings are length-capped and numbers clamped,
because grammar-constrained small models neither stop nor respect bounds."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any, Literal, cast, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, create_model

from dagmca.graph import Strict, TensionCategory
from dagmca.llm.base import Text, UnitStep


class TensionFlag(Strict):
    """An observer's verdict on one turn."""

    # Declared decisive fields first, the order the bundled 135M model is sent (its
    # concession: a reply cut off by max_tokens still carries them, see the partial
    # parse); every other model is sent the evidence first (llm/field_order.py).
    category: TensionCategory
    urgency: UnitStep
    question: Text(240)  # type: ignore[valid-type]
    excerpt: Text(200)  # type: ignore[valid-type]
    rationale: Text(300)  # type: ignore[valid-type]


def _turn_field(turns: int) -> Any:
    """Which of `turns` (numbered from 1) raised a flag: offered as an enum, so
    constrained decoding keeps it in range, and clamped for a server that does not."""

    def clamp(value: Any) -> Any:
        return min(turns, max(1, value)) if isinstance(value, int) else value

    return Annotated[
        int, BeforeValidator(clamp), WithJsonSchema({"type": "integer", "enum": list(range(1, turns + 1))})
    ]


def round_flag_schema(turns: int) -> type[TensionFlag]:
    """TensionFlag plus `turn`: which of the round's `turns` raised it."""
    fields: dict[str, Any] = {"turn": (_turn_field(turns), Field(...))}
    fields.update({name: (f.annotation, f) for name, f in TensionFlag.model_fields.items()})
    model = create_model("RoundTensionFlag", __config__=ConfigDict(extra="forbid"), **fields)
    return cast(type[TensionFlag], model)


@lru_cache(maxsize=32)
def joint_flag_schema(lenses: tuple[str, ...], turns: int = 0) -> type[BaseModel]:
    """One observer call for every lens (--observer-calls joint): `flags`, at most one
    per lens, each a TensionFlag that names its lens first (offered as an enum, so
    constrained decoding keeps to the configured lenses). With `turns` (--observer-calls
    siblings: one call on a group of sibling turns), each flag names its lens and then
    the turn that raised it, at most one per lens per turn. A longer list is cut to that
    many; a lens named twice on a turn is the caller's to settle."""
    n = len(lenses) * max(1, turns)
    fields: dict[str, Any] = {"lens": (Literal[tuple(lenses)], Field(...))}
    if turns:
        fields["turn"] = _turn_field(turns), Field(...)
    fields.update({name: (f.annotation, f) for name, f in TensionFlag.model_fields.items()})
    item: Any = create_model("LensFlag", __config__=ConfigDict(extra="forbid"), **fields)
    flags: Any = Annotated[
        list[item],
        BeforeValidator(lambda v: v[:n] if isinstance(v, list) else v),
        Field(json_schema_extra={"maxItems": n}),
    ]
    return _choice("JointFlags", flags=(flags, Field(...)))


def joint_turns(schema: type[BaseModel]) -> int:
    """How many turns a joint_flag_schema's flags choose from (0: one turn, unnamed)."""
    item = get_args(schema.model_fields["flags"].annotation)[0]
    if "turn" not in item.model_fields:
        return 0
    return len(item.model_json_schema()["properties"]["turn"]["enum"])


def joint_lenses(schema: type[BaseModel]) -> tuple[str, ...]:
    """The lenses a joint_flag_schema offers, in order."""
    item = get_args(schema.model_fields["flags"].annotation)[0]
    return cast(tuple[str, ...], get_args(item.model_fields["lens"].annotation))


class ShortAnswer(Strict):
    """A question session's answer, in the fewest words the question allows."""

    answer: Text(300)  # type: ignore[valid-type]


class PairVerdict(Strict):
    """The judge on two finished branches whose resolutions the prefilter found alike."""

    verdict: Literal["converge", "contradict", "elaborate", "unrelated"]
    shared_claim: Text(400)  # type: ignore[valid-type]
    reason: Text(400)  # type: ignore[valid-type]


class StubVerdict(Strict):
    """The judge on an open stub against a new node's text."""

    verdict: Literal["answered", "relevant", "open"]
    answering_sentence: Text(600)  # type: ignore[valid-type]
    reason: Text(400)  # type: ignore[valid-type]


class DuplicateVerdict(Strict):
    """The judge on two open stubs whose questions the prefilter found alike."""

    verdict: Literal["distinct", "duplicate"]
    reason: Text(400)  # type: ignore[valid-type]


class SameClaimVerdict(Strict):
    """The judge on two claims, each of another sample's final answer, that the
    prefilter found alike."""

    verdict: Literal["different", "same"]
    reason: Text(400)  # type: ignore[valid-type]


SignalKind = Literal[
    "none",
    "unexpected_finding",
    "goal_mismatch",
    "needs_reframing",
    "contradiction_detected",
    "resource_request",
]


class Reflection(Strict):
    """An agent's look at its own output (--self-reflect), and what it signals up."""

    satisfaction: UnitStep
    signal: SignalKind
    note: Text(160)  # type: ignore[valid-type]


MAX_SUBTASKS = 8


class Subtasks(Strict):
    """A decomposition (--protocol decompose). The count is fixed by the caller, which
    pads or trims: a small model does not keep to an array length."""

    subtasks: Annotated[
        list[Text(240)],  # type: ignore[valid-type]
        BeforeValidator(lambda v: v[:MAX_SUBTASKS] if isinstance(v, list) else v),
        Field(json_schema_extra={"minItems": 1, "maxItems": MAX_SUBTASKS}),
    ]


def _choice(name: str, **fields: Any) -> type[BaseModel]:
    model = create_model(name, __config__=ConfigDict(extra="forbid"), **fields)
    return cast(type[BaseModel], model)


def decision_schema(labels: list[str], may_answer: bool, answer_chars: int = 900) -> type[BaseModel]:
    """A vote-protocol turn after the first answer: exactly one of a vote (for one of
    `labels`, offered as an enum) or, when the caps allow, a new answer. A union told
    apart by `action`, so constrained decoding cannot mix the two; a reply that
    mixes them anyway (an endpoint without constrained decoding) fails validation."""
    reason = (Text(200), Field(...))
    vote = _choice(
        "Vote",
        action=(Literal["vote"], Field(...)),
        vote_for=(Literal[tuple(labels)], Field(...)),
        reason=reason,
    )
    choice: Any = vote
    if may_answer:
        answer = _choice(
            "NewAnswer",
            action=(Literal["new_answer"], Field(...)),
            new_answer=(Text(answer_chars), Field(...)),
            reason=reason,
        )
        # anyOf (a plain union), not oneOf with a discriminator: what strict structured
        # outputs accept; the literal `action` and extra="forbid" still tell them apart.
        choice = vote | answer
    return _choice("Decision", decision=(choice, Field(...)))


def ballot_schema(labels: list[str]) -> type[BaseModel]:
    """An ensemble vote: the label of the best answer, offered as an enum."""
    return _choice("Ballot", vote_for=(Literal[tuple(labels)], Field(...)), reason=(Text(200), Field(...)))
