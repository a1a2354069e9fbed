"""Settings files: `dagmca.toml`, `[tool.dagmca]` in pyproject.toml, or a file named
by --config, with their profiles.

A file holds a table per group (`[engine] cpp = 3`), a table per role
(`[roles.judge] model = "..."`) and named profiles laid out the same way
(`[profiles.cheap.engine] rounds = 1`). Everything in it is checked, used or not, so a
typo is found on the first run rather than the day its profile is picked; each mistake
is one line that names the file and the key.
"""

from __future__ import annotations

import difflib
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dagmca.config.groups import GROUP_OF, GROUPS
from dagmca.config.params import PARAMS, ROLES_GROUP
from dagmca.config.roles import RoleSettings
from dagmca.errors import SettingsError
from dagmca.graph import ModelRole

FILE = "dagmca.toml"
PYPROJECT = "pyproject.toml"
PROFILES = "profiles"
ROLE_NAMES = tuple(r.value for r in ModelRole)
# every key a settings table may hold, for the nearest-key hint of an unknown one
KNOWN = (
    *GROUPS,
    *(f"{p.group}.{p.key}" for p in PARAMS.values()),
    *(f"{ROLES_GROUP}.{r}" for r in ROLE_NAMES),
)


@dataclass
class Table:
    """The settings of one table, a file's top level or a profile: session settings by
    field and each role's by field, as written (validated by their layer)."""

    values: dict[str, Any] = field(default_factory=dict)
    roles: dict[ModelRole, dict[str, Any]] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)  # field or judge_model -> key as written


@dataclass
class SettingsFile:
    path: Path
    top: Table
    profiles: dict[str, Table]

    @property
    def source(self) -> str:
        return f"file:{self.path}"


def find(cwd: Path, explicit: Path | None) -> SettingsFile | None:
    """The settings file: `explicit` (--config, DAGMCA_CONFIG), else ./dagmca.toml, else
    `[tool.dagmca]` of ./pyproject.toml; None when there is none. Only the current
    folder is looked in, so a file in a parent folder cannot change a run unseen."""
    if explicit is not None:
        path = explicit if explicit.is_absolute() else cwd / explicit
        if not path.is_file():
            raise SettingsError(f"settings file {explicit} does not exist", "check --config or DAGMCA_CONFIG")
        return load(path)
    if (cwd / FILE).is_file():
        return load(cwd / FILE)
    if (cwd / PYPROJECT).is_file():
        loaded = load(cwd / PYPROJECT)
        if loaded.top.values or loaded.top.roles or loaded.profiles:
            return loaded
    return None


def load(path: Path) -> SettingsFile:
    """A settings file's tables, checked key by key; pyproject.toml's `[tool.dagmca]`."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise SettingsError(f"settings file {path} cannot be read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise SettingsError(f"settings file {path} is not UTF-8 text", "save it as UTF-8") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # its message ends with the line and column
        raise SettingsError(f"{path}: invalid TOML: {exc}", "fix the file's syntax there") from None
    prefix = ""
    if path.name == PYPROJECT:
        prefix = "tool.dagmca."
        tool = data.get("tool", {})
        data = tool.get("dagmca", {}) if isinstance(tool, dict) else {}
        _table_of(data, path, "tool.dagmca")
    profiles_data = data.pop(PROFILES, {})
    _table_of(profiles_data, path, prefix + PROFILES)
    top = parse_table(data, path, prefix, top=True)
    profiles = {}
    for name, body in profiles_data.items():
        where = f"{prefix}{PROFILES}.{name}"
        profiles[name] = parse_table(_table_of(body, path, where), path, where + ".", top=False)
    return SettingsFile(path, top, profiles)


def parse_table(data: Mapping[str, Any], path: Path, prefix: str, *, top: bool) -> Table:
    """One settings table: groups of settings and the roles' tables. `prefix` is where
    it sits in the file ("", "profiles.cheap."), for messages; `top`: the file's own
    table (the one that may hold profiles)."""
    table = Table()
    for group, body in data.items():
        where = prefix + group
        if group == ROLES_GROUP:
            for role_name, settings in _table_of(body, path, where).items():
                role = _role(role_name, path, f"{where}.{role_name}")
                own = table.roles.setdefault(role, {})
                for name, value in _table_of(settings, path, f"{where}.{role_name}").items():
                    key = f"{where}.{role_name}.{name}"
                    if name not in RoleSettings.model_fields:
                        raise unknown(key, path, prefix, top)
                    own[name] = value
                    table.keys[f"{role.value}_{name}"] = key
            continue
        if group not in GROUPS:
            raise unknown(where, path, prefix, top)
        model = GROUPS[group][0]
        for name, value in _table_of(body, path, where).items():
            if name not in model.model_fields:
                raise unknown(f"{where}.{name}", path, prefix, top)
            table.values[name] = value
            table.keys[name] = f"{where}.{name}"
    return table


def unknown(key: str, path: Path, prefix: str, top: bool) -> SettingsError:
    """An unknown key, with the known key nearest to it: the same setting in its own
    group when only the group is wrong, else the closest spelling."""
    name = key.removeprefix(prefix)
    last = name.rsplit(".", 1)[-1]
    if last in GROUP_OF and GROUP_OF[last] != ROLES_GROUP and not name.startswith(ROLES_GROUP + "."):
        nearest: str | None = f"{GROUP_OF[last]}.{last}"
    else:
        known = [*KNOWN, PROFILES] if top else list(KNOWN)
        nearest = next(iter(difflib.get_close_matches(name, known, n=1)), None)
    fix = f"did you mean {prefix}{nearest}?" if nearest else "see `dagmca config show` for every setting"
    return SettingsError(f"{path}: unknown key {key}", fix)


def _role(name: str, path: Path, key: str) -> ModelRole:
    if name in ROLE_NAMES:
        return ModelRole(name)
    near = difflib.get_close_matches(name, ROLE_NAMES, n=1)
    hint = f" (did you mean {near[0]}?)" if near else ""
    raise SettingsError(f"{path}: {key}: {name!r} is not a role", f"roles are {', '.join(ROLE_NAMES)}{hint}")


def _table_of(value: Any, path: Path, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SettingsError(f"{path}: {key} must be a table", f"write it as [{key}] with settings under it")
    return value
