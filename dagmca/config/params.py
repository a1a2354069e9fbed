"""Every setting by the names users give it: its file key, environment variable and
flag, all derived from its field, so that a new field needs nothing else.

A session setting `cpp` (group engine) is `[engine] cpp` in a file, `DAGMCA_CPP` and
`--cpp`; a role's setting `model` of the judge is `[roles.judge] model`,
`DAGMCA_JUDGE_MODEL` and `--judge-model`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic.fields import FieldInfo

from dagmca.config.groups import GROUPS
from dagmca.config.roles import RoleSettings
from dagmca.graph import ModelRole

ROLES_GROUP = "roles"
# settings whose flag is not the field's name (their names came before the rule)
FLAGS = {"request_timeout_s": "--request-timeout", "agent_timeout_s": "--agent-timeout"}
# names whose DAGMCA_* variable means something else (the settings file and profile,
# the stores): no setting may take them
RESERVED = frozenset({"config", "profile", "store", "llm_store"})


@dataclass(frozen=True)
class Param:
    """One setting as the command line, the environment and files name it. `name` is
    its identifier (`cpp`, `judge_model`), `field` its model's field, `role` the role
    it belongs to (None: the session's)."""

    name: str
    group: str
    field: str
    role: ModelRole | None
    info: FieldInfo

    @property
    def key(self) -> str:
        """Its name within its group: `cpp`, or `judge.model` (`roles.judge.model` in a file)."""
        return self.field if self.role is None else f"{self.role.value}.{self.field}"

    @property
    def env(self) -> str:
        return "DAGMCA_" + self.name.upper()

    @property
    def flag(self) -> str:
        return FLAGS.get(self.name, "--" + self.name.replace("_", "-"))

    @property
    def is_option(self) -> bool:
        """A setting with help text is a command-line option; the rest are for files and
        the environment (tuning that a run rarely changes)."""
        return self.info.description is not None

    @property
    def is_list(self) -> bool:
        """A list of names, given as comma-separated text on the command line and in the
        environment (a file may give either that or an array)."""
        return self.info.annotation == tuple[str, ...]


def _params() -> dict[str, Param]:
    params: dict[str, Param] = {}

    def add(p: Param) -> None:
        # a role's setting named like a session's would make one flag and one variable
        # mean two things
        if p.name in params or p.name in RESERVED:
            raise RuntimeError(f"setting name {p.name!r} is taken twice")
        params[p.name] = p

    for group, (model, _) in GROUPS.items():
        if group == ROLES_GROUP:
            continue
        for field, info in model.model_fields.items():
            add(Param(field, group, field, None, info))
    for role in ModelRole:
        for field, info in RoleSettings.model_fields.items():
            add(Param(f"{role.value}_{field}", ROLES_GROUP, field, role, info))
    return params


PARAMS = _params()
"""Every setting, the session's by group then each role's, in the order help and
`dagmca config show` list them."""


def flag(name: str) -> str:
    """The flag of the setting `name` (a field or a role's `judge_model`)."""
    return PARAMS[name].flag if name in PARAMS else "--" + name.replace("_", "-")
