"""Every command-line option, declared once.

The settings' options are not written by hand: `with_settings` builds them from the
settings' fields (`dagmca.config.params`), each with its flag, its `DAGMCA_*`
environment variable, its description as help and its group's help panel, and hands
the command the settings resolved from every source (flag > environment > --profile >
settings file > default). A new setting is a field, and every command that spends
calls has its option.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import types
import typing
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from pydantic import ValidationError

from dagmca.config import SessionConfig
from dagmca.config.groups import GROUPS
from dagmca.config.params import PARAMS, ROLES_GROUP, Param
from dagmca.config.params import flag as flag
from dagmca.config.sources import resolve
from dagmca.errors import SettingsError, UserError
from dagmca.graph import ModelRole

CONTEXT = "ctx"
FILES_PANEL = "Settings files"


def _shown_default(p: Param) -> str:
    if p.role is not None:
        return "the session's"
    value = p.info.default
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, tuple):
        return ",".join(value)
    return "unset" if value is None or value == "" else str(value)


def _value_type(p: Param) -> type:
    """What the option parses: the field's type without None; text for a choice (the
    settings' own check names the choices) and for a comma-separated list."""
    kind = p.info.annotation
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        kind = next(a for a in typing.get_args(kind) if a is not type(None))
    if p.is_list or typing.get_origin(kind) is Literal:
        return str
    if kind in (bool, int, float, str):
        return typing.cast(type, kind)
    raise TypeError(f"setting {p.name!r} has a type no option parses: {p.info.annotation}")


# settings shown in a panel of their own, not their group's: tracing is its own concern
# on the help page (and its long --no- names would narrow the LLM panel's help column)
PANELS = {"otel": "Tracing", "otel_content": "Tracing"}


def setting(name: str) -> Any:
    """The option of the setting `name`: unset unless given, so that the lower sources
    and the default apply."""
    p = PARAMS[name]
    if not p.is_option:
        raise ValueError(f"setting {name!r} has no description, so it is not an option")
    decl = p.flag
    if _value_type(p) is bool:
        decl = f"{decl}/--no-{decl[2:]}"
    described = p.info.description if p.role is None else f"{p.role.value}: {p.info.description}"
    default = _shown_default(p)
    # the variable in the line, not on one of its own; "unset" is no default to show
    shown = p.env if default in ("unset", "the session's") else f"{p.env}; default: {default}"
    return typer.Option(
        decl,
        envvar=p.env,
        help=f"{described} ({shown})",
        show_default=False,
        show_envvar=False,
        # a role's own options (six roles, ten each) would fill the help: the command's
        # help says how they are named, and the configuration guide lists them
        hidden=p.role is not None,
        rich_help_panel=PANELS.get(name, GROUPS[p.group][1]),
    )


def _parameter(name: str) -> inspect.Parameter:
    kind = _value_type(PARAMS[name])
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[kind | None, setting(name)]
    )


Profile = Annotated[
    str | None,
    typer.Option(
        "--profile",
        envvar="DAGMCA_PROFILE",
        help="A profile of the settings file (its profiles.NAME tables), over the file's own settings",
        rich_help_panel=FILES_PANEL,
    ),
]
ConfigFile = Annotated[
    Path | None,
    typer.Option(
        "--config",
        envvar="DAGMCA_CONFIG",
        help="Settings file to read (default: ./dagmca.toml, else tool.dagmca in ./pyproject.toml)",
        rich_help_panel=FILES_PANEL,
    ),
]
OPTIONS = tuple(name for name, p in PARAMS.items() if p.is_option)


def _command(
    func: Callable[..., None],
    names: Collection[str],
    extra: list[inspect.Parameter],
    call: Callable[..., None],
) -> Callable[..., None]:
    """`call` as a command that takes `func`'s own parameters (after its first) and the
    options of the settings `names`: typer reads the signature built here."""
    hints = typing.get_type_hints(func, include_extras=True)
    own = [
        p.replace(annotation=hints[p.name], kind=inspect.Parameter.KEYWORD_ONLY)
        for p in list(inspect.signature(func).parameters.values())[1:]
    ]
    taken = {p.name for p in own} & {*names, CONTEXT, *(p.name for p in extra)}
    if taken:
        raise RuntimeError(f"{func.__name__}: parameters named like settings: {sorted(taken)}")
    ordered = [*own, *extra, *(_parameter(n) for n in OPTIONS if n in names)]
    command = functools.wraps(func)(call)
    command.__signature__ = inspect.Signature(ordered)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in ordered}
    return command


def with_settings(
    *, exclude: Collection[str] = (), only: Collection[str] | None = None, sources: bool = False
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A command that takes the options of the settings it uses (`only`'s, by setting or
    by group, and every role's; all when None; never `exclude`'s), --profile and
    --config, and whose first parameter receives the settings resolved from every
    source: the `SessionConfig`, or with `sources` the `Resolved` (values and sources).
    Every bad setting fails here, before the command spends anything. A setting with no
    option still comes from the environment and the files."""
    used = None if only is None else {*only, ROLES_GROUP}
    names = [
        n for n in OPTIONS if n not in exclude and (used is None or n in used or PARAMS[n].group in used)
    ]

    def wrap(func: Callable[..., None]) -> Callable[..., None]:
        def call(**values: Any) -> None:
            ctx: typer.Context = values.pop(CONTEXT)
            profile, config_file = values.pop("profile"), values.pop("config_file")
            given = {n: values.pop(n) for n in names}
            # the environment is read with the files, so that `config show` (no option
            # given) and a command see it alike; here only what was typed counts
            flags = {n: v for n, v in given.items() if _typed(ctx, n)}
            resolved = resolve(
                flags, environ=os.environ, cwd=Path.cwd(), profile=profile, config_file=config_file
            )
            func(resolved if sources else resolved.config, **values)

        extra = [
            inspect.Parameter(CONTEXT, inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context),
            inspect.Parameter("profile", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Profile),
            inspect.Parameter(
                "config_file", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=ConfigFile
            ),
        ]
        command = _command(func, names, extra, call)
        if any(PARAMS[n].role is not None for n in names):
            command.__doc__ = f"{inspect.cleandoc(func.__doc__ or '')}\n\n{ROLES_NOTE}"
        return command

    return wrap


# what the help says instead of listing every role's options
ROLES_NOTE = (
    "Each role ({roles}) takes the LLM settings of its own calls as --ROLE-FIELD and DAGMCA_ROLE_FIELD "
    "(--judge-model, --judge-base-url, DAGMCA_JUDGE_MODEL, ...): docs/guides/configuration.md lists them."
).format(roles=", ".join(r.value for r in ModelRole))


def with_overrides(names: Collection[str]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A command that takes the options of the settings `names` and whose first
    parameter receives those given (by flag or environment) as a dict: changes to a
    stored session's own settings, which no settings file may make unasked."""

    def wrap(func: Callable[..., None]) -> Callable[..., None]:
        def call(**values: Any) -> None:
            overrides = {n: v for n in names if (v := values.pop(n)) is not None}
            func(overrides, **values)

        return _command(func, names, [], call)

    return wrap


def _typed(ctx: typer.Context, name: str) -> bool:
    """Whether the option was given on the command line (not read from the environment
    by click, nor left unset)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def build_config(values: dict[str, Any]) -> SessionConfig:
    """Settings from values by field (None: not given), as a stored session's settings
    with changes; a bad value is one line that names its flag."""
    given = {k: v for k, v in values.items() if v is not None}
    for key, value in given.items():
        if key in PARAMS and PARAMS[key].is_list and isinstance(value, str):
            given[key] = tuple(value.split(","))
    try:
        return SessionConfig(**given)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "option"
        raise SettingsError(f"{flag(field)}: {first['msg']}", "see the command's --help") from exc


SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def check_session_id(value: str | None) -> None:
    if value is not None and not SESSION_ID.match(value):
        raise UserError(f"session id {value!r} is not valid", "use letters, digits, '.', '_' or '-' (max 64)")


# -- the options of `doctor`, whose signature is written out (dagmca/cli/db.py) ------------
LLM = Annotated[str | None, setting("llm")]
Model = Annotated[str | None, setting("model")]
BaseURL = Annotated[str | None, setting("base_url")]
LocalModel = Annotated[str | None, setting("local_model")]
EmbedderOption = Annotated[str | None, setting("embedder")]

# -- the rest ---------------------------------------------------------------------------
PassageArg = Annotated[Path, typer.Argument(help="UTF-8 text file with the passage to debate.")]
OptionalPassageArg = Annotated[
    Path | None,
    typer.Argument(
        help="UTF-8 text file with the passage to debate (optional with --question).", show_default=False
    ),
]
Question = Annotated[
    str | None,
    typer.Option(
        "--question",
        help="A question about the passage (or alone); the final answer leads with its answer.",
    ),
]
QuestionFile = Annotated[
    Path | None,
    typer.Option("--question-file", help="A UTF-8 text file holding the question (instead of --question)."),
]
SessionArg = Annotated[str, typer.Argument(help="Session id.")]
Store = Annotated[
    str | None,
    typer.Option(
        "--store",
        envvar="DAGMCA_STORE",
        help="Store: a file (embedded SQLite) or bolt://, neo4j:// URI (default: NEO4J_URI, "
        "else .dagmca/dagmca.db)",
    ),
]
SessionId = Annotated[
    str | None, typer.Option("--session", help="Session id (default: generated from time and passage)")
]
OutDir = Annotated[
    Path | None,
    typer.Option("--out", help="Folder for the session's reports (default: sessions/<id>/ beside the store)"),
]
NewPassage = Annotated[
    Path | None,
    typer.Option(
        "--passage", help="New context: a passage to check the open stubs against (default: the final)"
    ),
]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="No live progress; summary only.")]
AsJSON = Annotated[bool, typer.Option("--json", help="Print JSON.")]

DEGRADED_EXIT = 4  # the run ended, but a whole function failed (the session's `problems`)

# -- a study: several samples of one passage (`run --samples`, `stability`) -------------
# in a panel of their own: the main panel's columns then stay narrow enough for its help
STUDY_PANEL = "A study: several samples"
Samples = Annotated[
    int,
    typer.Option(
        "--samples",
        rich_help_panel=STUDY_PANEL,
        metavar="N",
        min=1,
        help="Run the passage N times, each with its own seed, and report which tensions, claims and "
        "answers recur (`dagmca stability`).",
    ),
]
Vary = Annotated[
    str,
    typer.Option(
        "--vary",
        rich_help_panel=STUDY_PANEL,
        help="With --samples, what differs beside the seed: seed (nothing), temperature (--temperatures) "
        "or model (--models).",
    ),
]
Models = Annotated[
    str | None,
    typer.Option(
        "--models",
        rich_help_panel=STUDY_PANEL,
        help="With --vary model: comma-separated models, one per sample in turn.",
    ),
]
Temperatures = Annotated[
    str | None,
    typer.Option(
        "--temperatures",
        rich_help_panel=STUDY_PANEL,
        help="With --vary temperature: comma-separated, in turn (default: spread over 0.2-1.0).",
    ),
]
StudyId = Annotated[
    str | None,
    typer.Option(
        "--study",
        rich_help_panel=STUDY_PANEL,
        help="The study's id (default: from its inputs; its sessions are ID-1, ID-2, ...); the same command "
        "again resumes it.",
    ),
]
Candidates = Annotated[
    int,
    typer.Option(
        "--candidates",
        rich_help_panel=STUDY_PANEL,
        metavar="K",
        min=1,
        max=50,
        help="How many of another sample's most similar tensions (or claims) each one is judged against.",
    ),
]
