"""Pydantic models and enums as tables: each field's type, default, bounds and comment."""

from __future__ import annotations

import enum
import inspect
import json
import types
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .markdown import code, escape, paragraphs, table
from .source import member_comments


def type_name(tp: Any) -> str:
    """A type annotation as a reader would write it: `str | None`, `list[str]`,
    `"done" | "failed"` for a Literal, an enum or model by its class name."""
    if tp is type(None) or tp is None:
        return "None"
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Literal:
        return " | ".join(json.dumps(a.value if isinstance(a, enum.Enum) else a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(a) for a in args)
    if origin is typing.Annotated:
        return type_name(args[0])
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        if not args:
            return name
        inner = ", ".join("..." if a is Ellipsis else type_name(a) for a in args)
        return f"{name}[{inner}]"
    if isinstance(tp, type):
        return tp.__name__
    return str(tp).replace("typing.", "")


def shown_value(value: Any) -> str:
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, tuple):
        value = list(value)
    try:
        return json.dumps(value, ensure_ascii=False)
    except TypeError:
        return repr(value)


def field_default(field: Any) -> str:
    """A pydantic field's default, never computed: a factory is named, not called (a
    timestamp factory would put the time of generation in the page)."""
    if field.is_required():
        return "required"
    factory = field.default_factory
    if factory is not None:
        known = {list: "[]", dict: "{}", tuple: "[]", set: "[]"}
        return code(known.get(factory, f"{getattr(factory, '__name__', 'factory')}()"))
    return code(shown_value(field.default))


def constraints(field: Any) -> str:
    """The bounds pydantic enforces on a field (ge, le, gt, lt, lengths)."""
    found = []
    for item in field.metadata:
        for attr, sign in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            value = getattr(item, attr, None)
            if value is not None:
                found.append(f"{sign} {value}")
        for attr, what in (("min_length", "length ≥"), ("max_length", "length ≤")):
            value = getattr(item, attr, None)
            if value is not None:
                found.append(f"{what} {value}")
    return ", ".join(found)


def model_file(model: type) -> Path:
    return Path(inspect.getfile(model))


def model_comments(model: type) -> dict[str, str]:
    """Comments on a model's fields, from the class that declares each field."""
    found: dict[str, str] = {}
    for cls in reversed(model.__mro__):
        if cls.__module__.startswith("dagmca") and "__pydantic_fields__" in cls.__dict__:
            found.update(member_comments(model_file(cls), cls.__name__))
    return found


def field_rows(model: Any, skip: Iterable[str] = ()) -> list[list[str]]:
    comments = model_comments(model)
    rows = []
    for name, field in model.model_fields.items():
        if name in skip:
            continue
        note = " ".join(x for x in (field.description or "", comments.get(name, "")) if x)
        bounds = constraints(field)
        if bounds:
            note = f"{note} ({bounds})" if note else bounds
        cell = escape(note)
        if type_name(field.annotation) == "SessionConfig":
            cell = "every setting of the session: see the [configuration guide](../guides/configuration.md)"
        rows.append([code(name), code(type_name(field.annotation)), field_default(field), cell])
    return rows


def enum_section(cls: type[enum.Enum], level: str = "###") -> str:
    comments = member_comments(model_file(cls), cls.__name__)
    out = [f"{level} {cls.__name__}\n"]
    doc = cls.__dict__.get("__doc__")
    if doc and doc != enum.Enum.__doc__ and not doc.startswith("An enumeration"):
        out.append(paragraphs(doc) + "\n")
    rows = [[code(str(m.value)), escape(comments.get(m.name, ""))] for m in cls]
    out.append(table(["value", "meaning"], rows))
    return "\n".join(out)
