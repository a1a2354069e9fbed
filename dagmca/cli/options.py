"""Every command-line option, declared once.

A setting's option is built from its `SessionConfig` field: `--name`, the environment
variable `DAGMCA_NAME`, the field's description as help, its default shown. Settings
are resolved once, here: flag > DAGMCA_* environment > default.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from dagmca.config import SessionConfig
from dagmca.errors import UserError

FIELDS = SessionConfig.model_fields
# settings whose flag is not the field's name
FLAGS = {"request_timeout_s": "--request-timeout", "agent_timeout_s": "--agent-timeout"}


def flag(name: str) -> str:
    return FLAGS.get(name, "--" + name.replace("_", "-"))


def _shown_default(name: str) -> str:
    value = FIELDS[name].default
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, tuple):
        return ",".join(value)
    return "unset" if value is None else str(value)


def setting(name: str) -> Any:
    """The option of the setting `name`: unset unless given, so the default stays
    SessionConfig's."""
    description = FIELDS[name].description
    if description is None:
        raise ValueError(f"setting {name!r} has no description, so it is not an option")
    decl = flag(name)
    if FIELDS[name].annotation is bool:
        decl = f"{decl}/--no-{decl[2:]}"
    return typer.Option(
        decl,
        envvar=f"DAGMCA_{name.upper()}",
        help=f"{description} (default: {_shown_default(name)})",
        show_default=False,
    )


def build_config(values: dict[str, Any]) -> SessionConfig:
    """The settings from the options given (None: not given); a bad value is one line
    that names the flag as typed."""
    given = {k: v for k, v in values.items() if v is not None}
    for key in ("perspectives", "observers"):
        if isinstance(given.get(key), str):
            given[key] = tuple(given[key].split(","))
    try:
        return SessionConfig(**given)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "option"
        raise UserError(f"{flag(field)}: {first['msg']}", "see `dagmca run --help`") from exc


SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def check_session_id(value: str | None) -> None:
    if value is not None and not SESSION_ID.match(value):
        raise UserError(f"session id {value!r} is not valid", "use letters, digits, '.', '_' or '-' (max 64)")


# -- settings (SessionConfig) -----------------------------------------------------------
LLM = Annotated[str | None, setting("llm")]
Model = Annotated[str | None, setting("model")]
BaseURL = Annotated[str | None, setting("base_url")]
Temperature = Annotated[float | None, setting("temperature")]
Seed = Annotated[int | None, setting("seed")]
Concurrency = Annotated[int | None, setting("concurrency")]
Rpm = Annotated[float | None, setting("rpm")]
Tpm = Annotated[float | None, setting("tpm")]
RequestTimeout = Annotated[float | None, setting("request_timeout_s")]
MaxRetries = Annotated[int | None, setting("max_retries")]
Cache = Annotated[bool | None, setting("cache")]
MaxTurnTokens = Annotated[int | None, setting("max_turn_tokens")]
MaxFlagTokens = Annotated[int | None, setting("max_flag_tokens")]
MaxSynthesisTokens = Annotated[int | None, setting("max_synthesis_tokens")]
ContextWindow = Annotated[int | None, setting("context_window")]
ReasoningEffort = Annotated[str | None, setting("reasoning_effort")]
Sampling = Annotated[str | None, setting("sampling")]
LocalModel = Annotated[str | None, setting("local_model")]
DebateProtocol = Annotated[str | None, setting("protocol")]
Cpp = Annotated[int | None, setting("cpp")]
Depth = Annotated[int | None, setting("depth")]
Rounds = Annotated[int | None, setting("rounds")]
Signals = Annotated[bool | None, setting("signals")]
Convergence = Annotated[str | None, setting("convergence")]
ConvergenceThreshold = Annotated[float | None, setting("convergence_threshold")]
StrangeLoops = Annotated[int | None, setting("strange_loops")]
Perspectives = Annotated[str | None, setting("perspectives")]
Broadcast = Annotated[bool | None, setting("broadcast")]
SelfReflect = Annotated[bool | None, setting("self_reflect")]
MaxIterations = Annotated[int | None, setting("max_iterations")]
Agents = Annotated[int | None, setting("agents")]
MaxNewAnswersPerAgent = Annotated[int | None, setting("max_new_answers_per_agent")]
MaxNewAnswersTotal = Annotated[int | None, setting("max_new_answers_total")]
FairnessLead = Annotated[int | None, setting("fairness_lead")]
AgentTimeout = Annotated[float | None, setting("agent_timeout_s")]
MaxVoteRounds = Annotated[int | None, setting("max_vote_rounds")]
DecisionRetries = Annotated[int | None, setting("decision_retries")]
AgentContextSize = Annotated[int | None, setting("agent_context_size")]
AgentMemory = Annotated[str | None, setting("agent_memory")]
SuccessThreshold = Annotated[float | None, setting("success_threshold")]
Router = Annotated[str | None, setting("router")]
RouterTemperature = Annotated[float | None, setting("router_temperature")]
Observers = Annotated[str | None, setting("observers")]
MonitorEvery = Annotated[str | None, setting("monitor_every")]
ObserverCalls = Annotated[str | None, setting("observer_calls")]
UrgencyThreshold = Annotated[float | None, setting("urgency_threshold")]
Strategy = Annotated[str | None, setting("strategy")]
MaxBranches = Annotated[int | None, setting("max_branches")]
MaxDepth = Annotated[int | None, setting("max_depth")]
Judge = Annotated[str | None, setting("judge")]
PairPrefilter = Annotated[float | None, setting("pair_prefilter")]
StubPrefilter = Annotated[float | None, setting("stub_prefilter")]
DuplicatePrefilter = Annotated[float | None, setting("duplicate_prefilter")]
MergeThreshold = Annotated[float | None, setting("merge_threshold")]
RevisitThreshold = Annotated[float | None, setting("revisit_threshold")]
MaxRevisits = Annotated[int | None, setting("max_revisits")]
MaxOpenStubs = Annotated[int | None, setting("max_open_stubs")]
MaxStubChecks = Annotated[int | None, setting("max_stub_checks")]
MaxNodes = Annotated[int | None, setting("max_nodes")]
MaxLLMCalls = Annotated[int | None, setting("max_llm_calls")]
MaxTokens = Annotated[int | None, setting("max_tokens")]
MaxCostUSD = Annotated[float | None, setting("max_cost_usd")]
PricePer1kPrompt = Annotated[float | None, setting("price_per_1k_prompt")]
PricePer1kCompletion = Annotated[float | None, setting("price_per_1k_completion")]
MaxPassageBytes = Annotated[int | None, setting("max_passage_bytes")]

# -- the rest ---------------------------------------------------------------------------
PassageArg = Annotated[Path, typer.Argument(help="UTF-8 text file with the passage to debate.")]
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
