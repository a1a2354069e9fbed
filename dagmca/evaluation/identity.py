"""What an evaluation's results are bound to: every setting that can change an answer.

Each role's backend, model, endpoint and sampling, the prompts' version, the judge's
prompt version and every arm's resolved settings make an eval's identity. The default
eval id is a digest of it, so a rerun with another model or endpoint is another eval
that runs its own sessions; an eval asked for by its id under other settings is refused
with the difference named, never replayed. Settings that only limit or account a run
(concurrency, rate limits, timeouts, budgets, prices, tracing) are left out: a rerun
with a raised budget finishes the same eval."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from dagmca.config import SessionConfig
from dagmca.errors import UserError
from dagmca.evaluation.arms import Arm
from dagmca.evaluation.judging import JUDGE_PROMPT_VERSION
from dagmca.evaluation.tasks import Task, load_tasks
from dagmca.graph import ModelRole, NodeKind, NodeRecord, Strict
from dagmca.llm.factory import role_models
from dagmca.prompts.version import PROMPT_VERSION

# settings that bound or account a run without changing what any call answers
NOT_ANSWERS = frozenset(
    {
        "concurrency", "rpm", "tpm", "request_timeout_s", "max_retries", "endpoint_down_after",
        "cache", "otel", "otel_content", "max_llm_calls", "max_tokens", "max_cost_usd",
        "price_per_1k_prompt", "price_per_1k_completion", "agent_timeout_s", "roles",
    }
)  # fmt: skip
# what a role's calls are answered by
ROLE_KEYS = ("llm", "model", "base_url", "temperature", "sampling", "reasoning_effort", "local_model")


class RoleModel(Strict):
    """The model that plays one role in an eval, as every eval output names it."""

    role: str
    llm: str
    model: str
    base_url: str | None = None
    temperature: float


class TaskSet(Strict):
    """What an eval's tasks are, as a result file names them: a generated suite (its
    name, seed, difficulty and generator version) or a file, and the hash of the tasks'
    content (`tasks_digest`), by which two results are of one task set or not."""

    source: Literal["suite", "file", "tasks"]
    name: str
    tasks: int
    sha256: str
    seed: int | None = None
    difficulty: int | None = None
    generator_version: int | None = None


def task_set(tasks: Sequence[Task], *, path: Path | None = None) -> TaskSet:
    """A task file's set (or tasks given in code)."""
    return TaskSet(
        source="file" if path is not None else "tasks", name=path.name if path is not None else "",
        tasks=len(tasks), sha256=tasks_digest(tasks),
    )  # fmt: skip


def models_of(base: SessionConfig) -> list[RoleModel]:
    """Every role's model under `base`, with its backend, endpoint and temperature, in
    the roles' order."""
    found = []
    for role, model in role_models(base).items():
        own = base.role(role)
        found.append(
            RoleModel(
                role=role.value, llm=own.llm, model=model, base_url=own.base_url, temperature=own.temperature
            )
        )
    return found


def models_line(models: Sequence[RoleModel]) -> str:
    """`debate scripted (fake), judge gpt-4o (openai at http://...)`: roles played by the
    same model are named once."""
    groups: dict[str, list[str]] = {}
    for m in models:
        where = f"{m.llm} at {m.base_url}" if m.base_url else m.llm
        label = f"{m.model or 'the default model'} ({where}, temperature {m.temperature:g})"
        groups.setdefault(label, []).append(m.role)
    return "; ".join(f"{', '.join(roles)}: {label}" for label, roles in groups.items())


def identity(
    base: SessionConfig, arms: Sequence[Arm], *, vote_temperature: float = 0.7, match: str = "tokens"
) -> dict[str, Any]:
    """The eval's identity under `base`: what a stored eval's results were made with
    (a self-consistency arm's sampling temperature and matching rule among them)."""
    values = base.model_dump(mode="json")
    roles = {
        role.value: {k: v for k, v in base.role(role).model_dump(mode="json").items() if k in ROLE_KEYS}
        for role in ModelRole
    }
    return {
        "roles": roles,
        "prompt_version": PROMPT_VERSION,
        "judge_prompt_version": JUDGE_PROMPT_VERSION,
        "arms": {
            a.name: {
                **_answering(a.settings(values, base.seed)),
                **({"vote_temperature": vote_temperature, "match": match} if a.kind.sampled else {}),
            }
            for a in arms
        },
    }


def _answering(settings: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in sorted(settings.items()) if k not in NOT_ANSWERS}


def default_eval_id(tasks: Path | Sequence[Task], arms: str, repeats: int, made_with: str) -> str:
    """Same tasks (a file, or the tasks themselves), arms, repeats and identity
    (`made_with`, its digest): same id, so a plain rerun resumes, and a rerun with
    another model or endpoint is another eval. The tasks count by their content (each
    one's id, question, passage, answer, choices and scoring), so a task edited in place
    makes another eval rather than scoring the old answers against the new task.
    `dagmca eval` and `Workspace.eval` give a file one id."""
    found = load_tasks(tasks) if isinstance(tasks, Path) else list(tasks)
    source = str(tasks.resolve()) if isinstance(tasks, Path) else ""
    content = tasks_digest(found)
    return (
        "eval-" + hashlib.sha256(f"{source}|{content}|{arms}|{repeats}|{made_with}".encode()).hexdigest()[:10]
    )


def tasks_digest(tasks: Sequence[Task]) -> str:
    """What the tasks ask and how their answers are scored, in their order."""
    said = [t.model_dump(mode="json") for t in tasks]
    return hashlib.sha256(json.dumps(said, sort_keys=True).encode()).hexdigest()


def digest(found: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(found, sort_keys=True, default=str).encode()).hexdigest()[:10]


def differences(stored: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """What differs between a stored eval's identity and this run's, one phrase each
    (`judge model: 'a' then, 'b' now`). Arms only one of the two has are not a
    difference: a rerun may add an arm."""
    found: list[str] = []
    old_roles, new_roles = stored.get("roles", {}), now.get("roles", {})
    for role in new_roles:
        was, is_ = old_roles.get(role, {}), new_roles[role]
        found += [
            f"{role} {key}: {was.get(key)!r} then, {is_.get(key)!r} now"
            for key in ROLE_KEYS
            if was.get(key) != is_.get(key)
        ]
    for key in ("prompt_version", "judge_prompt_version"):
        if stored.get(key) != now.get(key):
            found.append(f"{key.replace('_', ' ')}: {stored.get(key)!r} then, {now.get(key)!r} now")
    old_arms, new_arms = stored.get("arms", {}), now.get("arms", {})
    for arm in (a for a in new_arms if a in old_arms):
        keys = sorted(set(old_arms[arm]) | set(new_arms[arm]))
        found += [
            f"arm {arm} {k}: {old_arms[arm].get(k)!r} then, {new_arms[arm].get(k)!r} now"
            for k in keys
            if old_arms[arm].get(k) != new_arms[arm].get(k)
        ]
    return found


def legacy_differences(settings: Mapping[str, Any], base: SessionConfig) -> list[str]:
    """An eval stored before identities were recorded: its backend and model are all it
    says, and they must be this run's."""
    found = []
    for key in ("llm", "model"):
        if key in settings and settings[key] != getattr(base, key):
            found.append(f"{key}: {settings[key]!r} then, {getattr(base, key)!r} now")
    if "identity" not in settings:
        found.append("the eval recorded no prompt version or role settings")
    return found


def refuse_other_settings(
    eval_id: str, old: NodeRecord, made_with: dict[str, Any], base: SessionConfig
) -> None:
    """A stored eval's results are its settings': reading them under other settings
    would report one model's answers as another's."""
    try:
        stored = json.loads(str(old.props.get("settings") or "{}"))
    except json.JSONDecodeError:
        stored = {}
    found = (
        differences(stored["identity"], made_with)
        if "identity" in stored
        else legacy_differences(stored, base)
    )
    if found:
        shown = "; ".join(found[:3]) + (f"; and {len(found) - 3} more" if len(found) > 3 else "")
        raise UserError(
            f"eval {eval_id} was run with other settings ({shown})",
            "give another --eval-id (or none: the default id follows the settings), "
            "or the eval's own settings",
        )


def same_task(eval_id: str, node: NodeRecord | None, task: Task) -> None:
    """A stored session is this task's only if it answered the task as it reads now: a
    task edited in place under an eval id given again would have its old answers scored
    against its new question."""
    if node is None or node.kind is not NodeKind.SESSION:
        return
    said = [
        what
        for what, stored, now in (
            ("question", node.props.get("question"), task.question),
            ("passage", node.props.get("passage"), task.passage),
        )
        if str(stored or "") != (now or "")
    ]
    if said:
        raise UserError(
            f"eval {eval_id}: task {task.id}'s {' and '.join(said)} changed since its session {node.id} ran",
            "give another --eval-id (or none: the default id follows the tasks' content)",
        )
