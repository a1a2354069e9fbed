"""A command's options object as its options: `with_options(EvalOptions)` gives the
command one option per field of the model (its flag from the field's name, or the
field's `flag`; its help the field's description; its default and bounds the field's)
and hands the command the object built from them. The command and the API entry it
calls share the model, so an option's default, bound and check are written once, as
`with_settings` does for the settings."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Annotated, Any

import annotated_types
import typer
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from dagmca.errors import UserError


def flag_of(name: str, info: FieldInfo) -> str:
    extra = info.json_schema_extra
    given = extra.get("flag") if isinstance(extra, dict) else None
    return str(given) if given else "--" + name.replace("_", "-")


def _bounds(info: FieldInfo) -> dict[str, Any]:
    """The field's inclusive bounds, which the option checks as it parses (an open one,
    `gt`, is left to the model's own check)."""
    found: dict[str, Any] = {}
    for m in info.metadata:
        if isinstance(m, annotated_types.Ge):
            found["min"] = m.ge
        elif isinstance(m, annotated_types.Le):
            found["max"] = m.le
    return found


def _parameter(name: str, info: FieldInfo) -> inspect.Parameter:
    option = typer.Option(flag_of(name, info), help=info.description, **_bounds(info))
    return inspect.Parameter(
        name,
        inspect.Parameter.KEYWORD_ONLY,
        default=info.get_default(call_default_factory=True),
        annotation=Annotated[info.annotation, option],
    )


def with_options(model: type[BaseModel]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A command whose parameter annotated `model` receives the object built from an
    option per field of the model; a bad value is one line that names its flag."""
    fields = model.model_fields

    def wrap(func: Callable[..., None]) -> Callable[..., None]:
        hints = typing.get_type_hints(func, include_extras=True)
        own = list(inspect.signature(func).parameters.values())
        target = next(p.name for p in own if hints.get(p.name) is model)
        clash = set(fields) & {p.name for p in own}
        if clash:
            raise RuntimeError(f"{func.__name__}: parameters named like {model.__name__}'s fields: {clash}")

        @functools.wraps(func)
        def call(*args: Any, **values: Any) -> None:
            given = {name: values.pop(name) for name in fields}
            try:
                built = model(**given)
            except ValidationError as exc:
                first = exc.errors()[0]
                name = str(first["loc"][0]) if first["loc"] else ""
                where = f"{flag_of(name, fields[name])}: " if name in fields else ""
                raise UserError(f"{where}{first['msg']}", "see the command's --help") from None
            func(*args, **values, **{target: built})

        at = next(i for i, p in enumerate(own) if p.name == target)
        keyword = inspect.Parameter.KEYWORD_ONLY
        params = [
            *(p.replace(annotation=hints[p.name]) for p in own[:at]),
            *(_parameter(name, info) for name, info in fields.items()),
            *(p.replace(annotation=hints[p.name], kind=keyword) for p in own[at + 1 :]),
        ]
        call.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        call.__annotations__ = {p.name: p.annotation for p in params}
        return call

    return wrap
