"""The cost of a session before it is spent (`dagmca estimate`, `run --dry-run`): from
the configuration, the protocol's call formula, the observer mode and the passage's
length, the range of calls, tokens and cost.

The minimum is a session whose observers raise nothing worth a branch: the main debate
(stopping at its first chance to converge), its observers, the final answer and the
ledger's split of it. The maximum is every branch, sub-branch and revisit the limits
allow, every debate running all its rounds, every pair of siblings judged and merged,
every stub check the caps allow, a ledger verdict for every claim, and every prompt
quoting as much as its caps let it. Not in the maximum: re-asks
of degenerate replies and retries of failed calls (each is one more call), and
--max-nodes (it only lowers the count)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pydantic import BaseModel

from dagmca.config import SessionConfig
from dagmca.graph import ModelRole, Strict
from dagmca.llm.prices import Prices
from dagmca.llm.tokens import TokenCounter, known_window
from dagmca.prompts.ledger import CLAIM_CHARS
from dagmca.team import SIBLINGS_PER_CHECK

OVERHEAD = 300  # tokens of every prompt beyond its quotes: system text, question, task
ASSUMED_WINDOW = 32_768
RECENT_TURNS = 5  # an observer's prompt: the turn to check and the four before it
CLAIM_TOKENS = CLAIM_CHARS // 4  # a claim, or a sentence quoted as a part of one, at most


class Range(Strict):
    min: float
    max: float


class Projection(Strict):
    calls: Range
    prompt_tokens: Range
    completion_tokens: Range
    cost_usd: Range
    debates: Range
    by_kind: dict[str, Range]  # calls per kind of call
    by_role: dict[ModelRole, RoleProjection]  # the roles that make calls, each at its model's prices
    window: int
    notes: list[str]


class RoleProjection(Strict):
    """One role's share of a projection: its model, calls and cost."""

    model: str
    calls: Range
    cost_usd: Range


@dataclass(frozen=True)
class Kind:
    """One kind of call: how many (min, max), and per call its prompt and output tokens.
    `role`: the model role that makes it, whose prices it is charged at."""

    name: str
    count: tuple[int, int]
    prompt: tuple[int, int]
    completion: tuple[int, int]
    role: ModelRole = ModelRole.DEBATE

    def cost(self, prices: Prices) -> tuple[float, float]:
        low = self.count[0] * (
            self.prompt[0] * prices.per_1k_prompt + self.completion[0] * prices.per_1k_completion
        )
        high = self.count[1] * (
            self.prompt[1] * prices.per_1k_prompt + self.completion[1] * prices.per_1k_completion
        )
        return low / 1000, high / 1000


def debate_turns(cfg: SessionConfig) -> tuple[int, int]:
    """Calls of one debate (each writes a turn): the protocol's formula."""
    peers = cfg.peer_count()
    if cfg.protocol == "decompose":
        n = cfg.tree().legacy_calls() + cfg.strange_loops
        return n, n
    if cfg.protocol == "vote":
        decisions = peers * cfg.max_vote_rounds * (1 + cfg.decision_retries)
        return 2 * peers, peers + decisions + 1
    if cfg.protocol == "ensemble":
        return 2 * peers, peers * (2 + cfg.decision_retries) + 1
    per_round = cfg.per_round_calls()
    low = min(2, cfg.rounds) * per_round + cfg.strange_loops
    high = cfg.rounds * per_round + cfg.strange_loops + int(cfg.broadcast)
    if cfg.self_reflect:
        high += cfg.max_iterations * per_round  # re-broadcasts on critical signals
    return low, high


def _tree(cfg: SessionConfig, depth: int) -> tuple[int, int]:
    """Debates in the fullest subtree of a debate at `depth`, and how many of them branch."""
    if depth >= cfg.max_depth or cfg.max_branches == 0:
        return 1, 0
    debates, branching = _tree(cfg, depth + 1)
    return 1 + cfg.max_branches * debates, 1 + cfg.max_branches * branching


def observer_calls(cfg: SessionConfig, turns: int, rounds: int, *, least: bool = False) -> int:
    mode = cfg.monitor_mode()
    if mode == "off":
        return 0
    if mode == "round":  # and the turns after the last round (strange loops), once
        return (rounds + int(cfg.strange_loops > 0)) * len(cfg.observers)
    if cfg.observer_calls == "per-lens":
        return turns * len(cfg.observers)
    if cfg.observer_calls == "joint":
        return turns
    # siblings: a round's groups, and each turn outside the rounds' phases (strange
    # loops, broadcasts) alone; other protocols: at least a call per phase of peers
    if cfg.protocol != "mca":
        return max(rounds, -(-turns // SIBLINGS_PER_CHECK)) if least else turns
    per_round = cfg.per_round_calls()
    checks = cfg.tree().sibling_checks_per_round(cfg.signals, SIBLINGS_PER_CHECK)
    return rounds * checks + max(0, turns - rounds * per_round)


def project(
    cfg: SessionConfig,
    passage: str,
    prices: Prices,
    model: str = "",
    role_models: Mapping[ModelRole, tuple[str, Prices]] | None = None,
    asked: bool = False,
) -> Projection:
    """`prices` and `model`: the session's; `role_models`: the model and prices of each
    role that has its own (the rest are charged at the session's); `asked`: a question
    session, whose final answer is followed by the call that takes its short answer."""
    notes: list[str] = []
    window = cfg.context_window or known_window(model or cfg.model)
    if window is None:
        window = ASSUMED_WINDOW
        notes.append(f"context window assumed {ASSUMED_WINDOW:,} tokens (set --context-window)")
    counter = TokenCounter()
    passage_tokens = counter.count(passage)
    share = int(cfg.passage_share * max(0, window - cfg.final_tokens() - max(64, window // 20)))
    shown = min(passage_tokens, share)
    sections = 0
    if passage_tokens > share:
        sections = math.ceil(passage_tokens / max(1, share // 2))
        notes.append(
            f"passage of {passage_tokens:,} tokens: too long to quote whole, mapped in ~{sections} sections"
        )

    def prompt(quoted: int) -> tuple[int, int]:
        return shown + OVERHEAD, min(window, shown + OVERHEAD + quoted)

    turn, flag, synth, final = (
        cfg.turn_tokens(),
        cfg.flag_tokens(),
        cfg.synthesis_tokens(),
        cfg.final_tokens(),
    )
    lenses = len(cfg.observers)
    t_low, t_high = debate_turns(cfg)
    rounds_low = min(2, cfg.rounds) if cfg.protocol == "mca" else 1
    rounds_high = cfg.rounds if cfg.protocol == "mca" else cfg.max_vote_rounds + 1
    main_tree, branching = _tree(cfg, 0)
    revisit_tree, revisit_branching = _tree(cfg, 1) if cfg.max_depth >= 1 else (0, 0)
    revisits = cfg.max_revisits if cfg.max_depth >= 1 and cfg.max_branches > 0 else 0
    d_high = main_tree + revisits * revisit_tree
    groups = branching + revisits * revisit_branching
    pairs = groups * math.comb(cfg.max_branches, 2) * 2  # each pair asked in both orders
    merges = groups * (cfg.max_branches // 2)
    stub_checks = (d_high - 1 + merges) * (cfg.max_stub_checks if cfg.judge == "llm" else 0)
    # a debate keeps at most --max-open-stubs open, each judged against one twin at most
    dedupe = cfg.judge == "llm" and cfg.monitor_mode() != "off" and cfg.duplicate_prefilter < 1.0
    duplicate_checks = d_high * cfg.max_open_stubs if dedupe else 0
    flag_out = flag
    if cfg.monitor_mode() == "turn" and cfg.observer_calls != "per-lens":
        flag_out *= lenses * (SIBLINGS_PER_CHECK if cfg.observer_calls == "siblings" else 1)
    quoted_turns = max(cfg.cpp, cfg.peer_count()) * turn + turn  # a parent quotes its children
    observed = t_high  # an observer's prompt: a round's turns, or the transcript and the turns checked
    if cfg.monitor_mode() == "turn":
        checked = SIBLINGS_PER_CHECK if cfg.observer_calls == "siblings" else 1
        observed = RECENT_TURNS - 1 + checked
    kinds = [
        Kind("debate turns", (t_low, d_high * t_high), prompt(quoted_turns), (1, turn)),
        Kind(
            "observers",
            (
                observer_calls(cfg, t_low, rounds_low, least=True),
                d_high * observer_calls(cfg, t_high, rounds_high),
            ),
            prompt(observed * turn),
            (1, flag_out),
            ModelRole.OBSERVER,
        ),
        Kind("judge: stub checks", (0, stub_checks), prompt(synth), (1, flag), ModelRole.JUDGE),
        Kind("judge: duplicates", (0, duplicate_checks), prompt(0), (1, flag), ModelRole.JUDGE),
        Kind(
            "judge: sibling pairs",
            (0, pairs if cfg.judge == "llm" else 0),
            prompt(2 * synth),
            (1, flag),
            ModelRole.JUDGE,
        ),
        Kind("merges", (0, merges), prompt(cfg.max_branches * synth), (1, synth), ModelRole.JUDGE),
        Kind("final", (1, 1 + d_high), prompt(d_high * synth), (1, final), ModelRole.FINAL),
        *ledger_kinds(cfg, prompt, 1 + d_high + merges),
    ]
    if asked:
        kinds.append(Kind("short answer", (1, 1), prompt(final), (1, flag), ModelRole.FINAL))
    if sections:
        kinds.append(
            Kind(
                "passage map",
                (sections, 2 * sections),
                (OVERHEAD, OVERHEAD + share),
                (1, synth),
                ModelRole.MAP,
            )
        )
    if cfg.llm != "fake":
        kinds.append(Kind("pre-flight", (0, 2), (50, 200), (1, 50)))
    own = dict(role_models or {})
    priced = {role: own.get(role, (model, prices)) for role in ModelRole}
    costs = [k.cost(priced[k.role][1]) for k in kinds]
    by_role: dict[ModelRole, RoleProjection] = {}
    for role in ModelRole:
        mine = [(k, c) for k, c in zip(kinds, costs, strict=True) if k.role is role and k.count[1] > 0]
        if mine:
            by_role[role] = RoleProjection(
                model=priced[role][0],
                calls=Range(min=sum(k.count[0] for k, _ in mine), max=sum(k.count[1] for k, _ in mine)),
                cost_usd=Range(
                    min=round(sum(c[0] for _, c in mine), 4), max=round(sum(c[1] for _, c in mine), 4)
                ),
            )
    low = [k.count[0] for k in kinds]
    high = [k.count[1] for k in kinds]
    p_low = sum(k.count[0] * k.prompt[0] for k in kinds)
    p_high = sum(k.count[1] * k.prompt[1] for k in kinds)
    c_low = sum(k.count[0] * k.completion[0] for k in kinds)
    c_high = sum(k.count[1] * k.completion[1] for k in kinds)
    return Projection(
        calls=Range(min=sum(low), max=sum(high)),
        prompt_tokens=Range(min=p_low, max=p_high),
        completion_tokens=Range(min=c_low, max=c_high),
        cost_usd=Range(min=round(sum(c[0] for c in costs), 4), max=round(sum(c[1] for c in costs), 4)),
        debates=Range(min=1, max=d_high),
        by_kind={k.name: Range(min=k.count[0], max=k.count[1]) for k in kinds},
        by_role=by_role,
        window=window,
        notes=notes,
    )


def ledger_kinds(cfg: SessionConfig, prompt: Callable[[int], tuple[int, int]], texts: int) -> list[Kind]:
    """The emergence ledger's calls: each traced text split into claims (the final;
    with --ledger all, of `texts` at most, also every resolution and synthesis), and one
    verdict call per claim that has candidates, each quoting up to --ledger-candidates
    texts, a recombination check per claim whose parts two or more specialists state
    (those parts' sentences, a claim's worth each), and an entailment check per claim
    that no specialist states. None when off."""
    if cfg.ledger_mode() == "off":
        return []
    traced = texts if cfg.ledger_mode() == "all" else 1
    longest = max(cfg.turn_tokens(), cfg.synthesis_tokens(), cfg.final_tokens())
    return [
        Kind("ledger: claims", (1, traced), prompt(longest), (1, cfg.synthesis_tokens()), ModelRole.JUDGE),
        Kind(
            "ledger: verdicts",
            (0, traced * cfg.ledger_max_claims),
            prompt(cfg.ledger_candidates * longest),
            (1, cfg.flag_tokens() * cfg.ledger_candidates),
            ModelRole.JUDGE,
        ),
        # a claim whose parts two or more specialists state: are they together all of it?
        Kind(
            "ledger: recombination checks",
            (0, traced * cfg.ledger_max_claims),
            prompt(cfg.ledger_candidates * CLAIM_TOKENS),
            (1, cfg.flag_tokens() * (cfg.ledger_candidates + 2)),
            ModelRole.JUDGE,
        ),
        # a claim that no specialist states (nor two specialists' parts all of it): one
        # entailment check
        Kind(
            "ledger: entailment checks",
            (0, traced * cfg.ledger_max_claims),
            prompt(cfg.ledger_candidates * longest),
            (1, cfg.flag_tokens() * (cfg.ledger_candidates + 2)),
            ModelRole.JUDGE,
        ),
    ]


def role_pricing(cfg: SessionConfig) -> dict[ModelRole, tuple[str, Prices]]:
    """The model and prices of each role that has settings of its own."""
    from dagmca.llm.factory import model_name
    from dagmca.llm.prices import resolve_prices

    pricing = {}
    for role in cfg.roles:
        own = cfg.role(role)
        pricing[role] = (model_name(own), resolve_prices(own, model_name(own)))
    return pricing


def as_json(p: BaseModel) -> dict[str, object]:
    """Whole numbers as integers."""

    def clean(v: object) -> object:
        if isinstance(v, float) and v.is_integer() and not isinstance(v, bool):
            return int(v)
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v

    out = clean(p.model_dump())
    assert isinstance(out, dict)
    return out
