"""Where each setting's value comes from, highest first: a flag, a `DAGMCA_*`
environment variable, the profile picked with --profile, the settings file, the default.

Each source is read into a layer of its own and checked on its own, so that a bad
value is reported as its source wrote it (`--cpp`, `DAGMCA_CPP`, `engine.cpp` in a
file); the layers are then merged setting by setting, and the result remembers which
layer gave each value (`dagmca config show`). Role settings merge field by field too:
`--judge-model` over a file's `[roles.judge] base_url` keeps that base URL.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from dagmca.config.files import Table, find
from dagmca.config.params import PARAMS, ROLES_GROUP, Param
from dagmca.config.roles import RoleSettings
from dagmca.config.session import SessionConfig
from dagmca.errors import SettingsError
from dagmca.graph import ModelRole

DEFAULT = "default"


@dataclass
class Layer:
    """The values one source gives, checked: session settings by field, role settings
    by role and field."""

    source: str
    values: dict[str, Any] = field(default_factory=dict)
    roles: dict[ModelRole, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Setting:
    """One effective setting, as `dagmca config show` lists it."""

    name: str  # cpp, or judge.model for a role's
    group: str
    value: Any  # as JSON would hold it
    source: str


@dataclass(frozen=True)
class Resolved:
    """The settings a command runs with, and for each the source of its value (flag,
    env, profile:NAME, file:PATH or default)."""

    config: SessionConfig
    sources: dict[str, str]  # Param name -> the source that gave its value

    def settings(self) -> list[Setting]:
        """Every setting with its value and source, in groups' order."""
        flat = self.config.model_dump(mode="json")
        roles = flat.pop(ROLES_GROUP)
        rows = []
        for p in PARAMS.values():
            value = flat[p.field] if p.role is None else roles.get(p.role.value, {}).get(p.field)
            rows.append(Setting(p.key, p.group, value, self.sources[p.name]))
        return rows


def resolve(
    flags: Mapping[str, Any] | None = None,
    *,
    environ: Mapping[str, str],
    cwd: Path,
    profile: str | None = None,
    config_file: Path | None = None,
) -> Resolved:
    """The settings from every source. `flags`: values given on the command line, by
    Param name (`cpp`, `judge_model`); a list setting may be comma-separated text."""
    settings_file = find(cwd, config_file)
    layers = [flag_layer(flags or {}), env_layer(environ)]
    if settings_file is not None:
        # every profile is checked, picked or not: a mistake shows on the first run
        top = table_layer(settings_file.top, settings_file.source, settings_file.path)
        profiles = {
            name: table_layer(table, f"profile:{name}", settings_file.path)
            for name, table in settings_file.profiles.items()
        }
        if profile is not None:
            layers.append(_profile(profiles, profile, settings_file.path))
        layers.append(top)
    elif profile is not None:
        raise SettingsError(
            f"unknown profile {profile!r}: there is no settings file",
            f"define [profiles.{profile}.<group>] in ./dagmca.toml, or name a file with --config",
        )
    return merge(layers)


def merge(layers: list[Layer]) -> Resolved:
    """Each setting from the first layer that has it, else its default."""
    values: dict[str, Any] = {}
    roles: dict[ModelRole, dict[str, Any]] = {}
    sources: dict[str, str] = {}
    for p in PARAMS.values():
        sources[p.name] = DEFAULT
        for layer in layers:
            have = layer.values if p.role is None else layer.roles.get(p.role, {})
            if p.field in have:
                target = values if p.role is None else roles.setdefault(p.role, {})
                target[p.field] = have[p.field]
                sources[p.name] = layer.source
                break
    try:
        roles_set = {role: RoleSettings(**own) for role, own in roles.items()}
        config = SessionConfig.model_validate({**values, ROLES_GROUP: roles_set})
    except ValidationError as exc:  # every value passed its own layer: a rule across settings
        raise SettingsError(f"these settings do not fit together: {_message(exc)}") from None
    return Resolved(config, sources)


def flag_layer(flags: Mapping[str, Any]) -> Layer:
    given = {name: v for name, v in flags.items() if v is not None}
    return _layer("flag", given, lambda p, v: p.flag, "see the command's --help")


def env_layer(environ: Mapping[str, str]) -> Layer:
    """`DAGMCA_<SETTING>` and `DAGMCA_<ROLE>_<SETTING>`; an empty variable is unset, as on
    the command line's options."""
    given = {p.name: environ[p.env] for p in PARAMS.values() if environ.get(p.env)}
    return _layer("env", given, lambda p, v: f"{p.env}={v!s} ({p.flag})", "fix or unset the variable")


def _profile(profiles: dict[str, Layer], name: str, path: Path) -> Layer:
    if name not in profiles:
        known = ", ".join(sorted(profiles)) or "none"
        raise SettingsError(f"unknown profile {name!r} in {path}", f"the profiles there: {known}")
    return profiles[name]


def table_layer(table: Table, source: str, path: Path) -> Layer:
    given = {
        **table.values,
        **{f"{r.value}_{k}": v for r, own in table.roles.items() for k, v in own.items()},
    }
    return _layer(source, given, lambda p, v: f"{path}: {table.keys[p.name]} = {v!r}", "fix it in the file")


def _layer(source: str, given: dict[str, Any], where: Callable[[Param, Any], str], fix: str) -> Layer:
    """`given` (by Param name) checked: the first bad value is one line that names it
    as its source wrote it (`where`)."""
    layer = Layer(source)
    listed = {n: _listed(PARAMS[n], v) for n, v in given.items()}

    def named(p: Param) -> str:  # the value as it was given, not as it was split
        return where(p, given[p.name])

    session = {n: v for n, v in listed.items() if PARAMS[n].role is None}
    layer.values = _checked(SessionConfig, session, PARAMS.__getitem__, named, fix)
    for role in ModelRole:
        own = {PARAMS[n].field: v for n, v in listed.items() if PARAMS[n].role is role}
        if own:
            by_field = {p.field: p for p in PARAMS.values() if p.role is role}
            layer.roles[role] = _checked(RoleSettings, own, by_field.__getitem__, named, fix)
    return layer


def _checked(
    model: type[BaseModel],
    values: dict[str, Any],
    param: Callable[[str], Param],
    where: Callable[[Param], str],
    fix: str,
) -> dict[str, Any]:
    """`values` as `model` validates them (every other field at its default), so that a
    value is checked with its field's own rules and converted (text to numbers)."""
    try:
        checked = model.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = str(first["loc"][0]) if first["loc"] else ""
        if name not in values:
            raise SettingsError(_message(exc), fix) from None
        raise SettingsError(f"{where(param(name))}: {first['msg']}", fix) from None
    return {name: getattr(checked, name) for name in values}


def _listed(p: Param, value: Any) -> Any:
    """A list setting given as text: comma-separated."""
    return tuple(value.split(",")) if p.is_list and isinstance(value, str) else value


def _message(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else first["msg"]
