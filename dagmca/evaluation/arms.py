"""The arms of an evaluation: what each runs, and the compute-matched vote baselines.

Every arm is a question session through the same pipeline, so every arm's answer is
read by the same short-answer call and every arm is in the graph, resumable and
accounted the same way. `single` is therefore the one-agent session (a tree of depth
1, one round, no lateral, signals or strange loop): one debate call, then the final
integration and short-answer calls every arm makes. A direct one-call path would
save those two calls, but its answer would be read differently from every other
arm's, which is the difference an evaluation must not introduce."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from dagmca.config import SessionConfig
from dagmca.errors import UserError

# What every arm but `dag` holds fixed so that only the protocol differs: the main
# debate alone (no observers, branches or merges, whose calls are not the protocol's).
BARE: dict[str, Any] = {"monitor_every": "off", "max_branches": 0, "max_depth": 0}
# Every arm: agents that remember nothing of another arm; no emergence ledger unless
# asked for (its calls judge the answer, they do not make it, so they are counted apart
# from the arm's); and no reads from the response cache, so that no arm is answered
# with another's reply to the same prompt, which would make the two correlated and the
# cached one free. (A resumed session still replays its own calls from the cache.)
EVERY_ARM: dict[str, Any] = {"agent_memory": "session", "ledger": "off", "cache": False}
# the ledger settings that turn it on for the arms that trace (`--ledger final` or
# `all` on the eval); `auto` stays off there, since tracing is a measurement's cost
TRACING = ("final", "all")
SINGLE: dict[str, Any] = {"depth": 1, "rounds": 1, "signals": False, "strange_loops": 0, "protocol": "mca"}
MAX_PEERS = 32  # the most agents the ensemble protocol takes
# calls every question session makes besides its debates: the final integration and
# the short answer; a matched vote arm makes them too, so they come off its share
FINAL_CALLS = 2


@dataclass(frozen=True)
class ArmKind:
    name: str
    about: str
    settings: dict[str, Any]
    matched_to: str | None = None  # the arm whose calls, task by task, set this one's size
    # the full session's arms: with --ledger final (or all), their finals are traced and
    # their claims' origins reported beside their quality
    traced: bool = False
    # self-consistency: single-agent samples at the vote temperature, sized by the
    # target's spend, and the plurality of their answers (evaluation/consistency.py)
    sampled: bool = False
    # read from its target's session at no call (first-vote: evaluation/firstvote.py)
    derived: bool = False


VOTE: dict[str, Any] = {**BARE, "protocol": "ensemble"}
SAMPLED: dict[str, Any] = {**BARE, **SINGLE}
# the arms an eval runs unless told: the debate, the baselines that explain most of what
# is credited to debate (self-consistency, and the vote of its own agents' first answers,
# Choi et al. 2025), and one agent
DEFAULT_ARMS = "mca,vote,single,first-vote"
SAMPLE_SEEDS = 1_000_003  # seeds apart between a vote's samples, so no repeat's seed is another's sample's
KINDS = {
    k.name: k
    for k in (
        ArmKind("mca", "bottom-up rounds, main debate only", {**BARE, "protocol": "mca"}),
        ArmKind("decompose", "the top-down baseline", {**BARE, "protocol": "decompose"}),
        ArmKind("massgen", "MassGen-style answers and votes", {**BARE, "protocol": "vote"}),
        ArmKind("ensemble", "independent answers, LLM voters, the winner synthesizes", VOTE),
        ArmKind("single", "one agent, one call, same model", {**BARE, **SINGLE}),
        ArmKind("vote", "self-consistency: single answers sampled and their plurality, matched to mca",
                SAMPLED, "mca", sampled=True),
        ArmKind("dag", "the full session: observers, branches, merges", {"protocol": "mca"}, traced=True),
        ArmKind("dag-vote", "self-consistency matched to dag", SAMPLED, "dag", sampled=True),
        ArmKind("first-vote", "the plurality of mca's agents' first answers, before any read another",
                BARE, "mca", derived=True),
        ArmKind("dag-first-vote", "the plurality of dag's main debate's first answers", BARE, "dag",
                derived=True),
    )
}  # fmt: skip


@dataclass(frozen=True)
class Arm:
    """An arm as asked for: `name` as written (`mca:rounds=1`), its kind, and the
    settings it overrides on top of the kind's."""

    name: str
    kind: ArmKind
    overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def slug(self) -> str:
        """The arm in a session id: its name in the characters ids allow."""
        return re.sub(r"[^A-Za-z0-9._-]+", "_", self.name).strip("_")

    def settings(self, base: Mapping[str, Any], seed: int) -> dict[str, Any]:
        ledger = base.get("ledger") if self.kind.traced and base.get("ledger") in TRACING else "off"
        every = {**EVERY_ARM, "ledger": ledger}
        return {**base, **every, **self.kind.settings, **self.overrides, "seed": seed}


def _value(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "on", "yes"):
        return True
    if low in ("false", "off", "no"):
        return False
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text.strip()


def parse_arm(spec: str, base: Mapping[str, Any]) -> Arm:
    """`kind` or `kind:key=value,key=value`, its settings checked against `base` now,
    so an unknown arm or setting stops the eval before any call."""
    name = spec.strip()
    kind_name, _, rest = name.partition(":")
    kind = KINDS.get(kind_name.strip())
    if kind is None:
        raise UserError(f"--arms: unknown arm {kind_name!r}", f"use some of: {', '.join(KINDS)}")
    overrides: dict[str, Any] = {}
    for pair in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = pair.partition("=")
        key = key.strip()
        if not eq or not key:
            raise UserError(f"--arms: {name}: {pair!r} is not key=value", "e.g. mca:rounds=1,signals=false")
        if key not in SessionConfig.model_fields:
            raise UserError(f"--arms: {name}: unknown setting {key!r}", "see `dagmca config show`")
        overrides[key] = _value(value)
    arm = Arm(name, kind, overrides)
    try:
        SessionConfig.model_validate(arm.settings(base, 0))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UserError(f"--arms: {name}: {'.'.join(map(str, first['loc']))}: {first['msg']}") from None
    return arm


def parse_arms(text: str, base: Mapping[str, Any]) -> list[Arm]:
    """The arms of `--arms`, each once, with the arm a matched one needs present."""
    arms = _rejoin(text, base)
    names = [a.name for a in arms]
    if not arms:
        raise UserError("--arms: no arm named", "e.g. --arms mca,vote,single")
    if len(set(names)) != len(names):
        raise UserError(f"--arms: {sorted(n for n in names if names.count(n) > 1)[0]!r} named twice")
    for arm in arms:
        need = arm.kind.matched_to
        if need is not None and need not in names:
            how = f"reads {need}'s sessions" if arm.kind.derived else f"is matched to {need}'s spend"
            raise UserError(f"--arms: {arm.name} {how}, and {need} is not an arm", f"add {need}")
    return arms


def _rejoin(text: str, base: Mapping[str, Any]) -> list[Arm]:
    """Arms are separated by commas, and so are a variant's settings: a piece with `=`
    and no `:` continues the variant before it (`mca:rounds=1,signals=false,vote`)."""
    specs: list[str] = []
    for piece in (p.strip() for p in text.split(",")):
        if not piece:
            continue
        if "=" in piece and ":" not in piece and specs:
            specs[-1] += "," + piece
        else:
            specs.append(piece)
    return [parse_arm(s, base) for s in specs]


def matched_vote(calls: int) -> dict[str, Any]:
    """Settings of a compute-matched vote: `calls` debate calls spent on independent
    answers, one majority vote per voter, and the winner's final answer
    (self-consistency). C calls = n answers + (C - 1 - n) votes + 1."""
    answers = min(MAX_PEERS, max(1, -(-(calls - 1) // 2)))
    voters = max(1, min(answers, calls - 1 - answers))
    return {"agents": answers, "ensemble_voters": voters}


def vote_for(total_calls: int) -> dict[str, Any]:
    """The matched vote's settings for an arm that made `total_calls` calls in all on a
    task: the vote arm's debate gets what is left after its own final calls."""
    return matched_vote(max(1, total_calls - FINAL_CALLS))


def session_id(eval_id: str, arm: Arm, task: str, repeat: int, sample: int | None = None) -> str:
    """The session of (arm, task, repeat) in eval `eval_id` (and of a vote's sample):
    stable, so a rerun finds it; within the 64 characters ids allow (long names end in
    a digest instead)."""
    sid = f"{eval_id}-{arm.slug}-{task}-r{repeat}" + (f"-s{sample}" if sample is not None else "")
    if len(sid) <= 64:
        return sid
    digest = hashlib.sha256(sid.encode()).hexdigest()[:12]
    return f"{sid[:51]}-{digest}"
