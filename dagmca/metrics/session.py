"""The metrics of a stored session, computed from its graph alone (so `dagmca metrics`
works on any session, also one pushed to Neo4j or run before metrics existed)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from pydantic import Field

from dagmca.config import SessionConfig
from dagmca.errors import UserError
from dagmca.graph import (
    CallRecord,
    ClaimNode,
    DebateNode,
    EdgeType,
    FinalNode,
    GraphNode,
    Phase,
    Role,
    RoundNode,
    SessionNode,
    Strict,
    TensionCategory,
    TensionNode,
    TurnNode,
    node_from_record,
    role_of,
)
from dagmca.graph.calls import made
from dagmca.metrics import measures
from dagmca.metrics.answers import AnswerMetrics, Reading, answer_metrics
from dagmca.metrics.citations import Citations, citations
from dagmca.metrics.ledger import LedgerMetrics, LedgerShares, debate_shares, ledger_metrics
from dagmca.metrics.recurrence import Recurring
from dagmca.similarity import Embedder
from dagmca.similarity.counts import EmbedCounts
from dagmca.store.base import GraphStore
from dagmca.team import AgentTree

# What an agent contributes in a round: its last turn of these phases.
CONTENT = (
    Phase.RESPOND, Phase.LATERAL, Phase.OBSERVE, Phase.SYNTHESIZE,
    Phase.ANSWER, Phase.NEW_ANSWER, Phase.PRESENT,
)  # fmt: skip
CATEGORIES = [c.value for c in TensionCategory]


class DebateMetrics(Strict):
    debate: str
    protocol: str
    rounds: int
    lateral_revision_rate: float
    per_agent_revision_counts: dict[str, int]
    convergence_trajectory: list[float]
    sibling_similarity: list[float]  # per round
    collapse_alarm: bool
    answer_length: list[float]  # mean words per agent contribution, per round
    bloat_alarm: bool
    # the share of the resolution's sentences with no close sentence among the children's
    # last round, by embedding cosine: a similarity estimate, blind to paraphrase and
    # recombination (the ledger's judged shares are the novelty measures)
    similarity_novelty: float | None
    ledger: LedgerShares | None = None  # its resolution's claims by origin (--ledger all)


class RoleUsage(Strict):
    """The calls one role made on one model (cache hits excluded), and what they cost."""

    role: str
    model: str
    calls: int
    tokens: int
    cost_usd: float


def role_usage(calls: Iterable[CallRecord]) -> list[RoleUsage]:
    """Calls, tokens and cost by role and model, over the calls actually made."""
    totals: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0, 0, 0.0])
    for c in made(calls):
        row = totals[(c.role or role_of(c.phase).value, c.model)]  # older records: by phase
        row[0] += 1
        row[1] += c.prompt_tokens + c.completion_tokens
        row[2] += c.cost_usd
    return [
        RoleUsage(role=role, model=model, calls=int(n), tokens=int(t), cost_usd=round(cost, 6))
        for (role, model), (n, t, cost) in sorted(totals.items())
    ]


class SessionMetrics(Strict):
    session: str
    debates: list[DebateMetrics]
    lateral_revision_rate: float
    specialization: float | None  # S
    context_divergence: float | None  # D
    differentiation_chi2: float | None  # F
    differentiation_dof: int | None
    differentiation_p: float | None
    agent_categories: dict[str, dict[str, int]]  # the table behind S and F
    nodes: int
    llm_calls: int
    tokens: int
    cost_usd: float
    cost_per_node: float
    tokens_per_node: float
    calls_per_node: float
    omitted_chars: int  # quoted text left out of prompts to fit the context window, in all
    # the degeneration guard: replies asked again, texts kept marked degenerate, tension
    # questions dropped (looping, or restating the observers' instructions)
    reasks: int = 0
    degenerate_texts: int = 0
    dropped_tensions: int = 0
    # judged decisions stored marked degenerate (their reason said nothing after a
    # re-ask), which acted on nothing: stub checks, ledger verdicts, entailment checks
    degenerate_reasons: int = 0
    # the calls by role and model (a judge on another model than the debaters)
    by_role: list[RoleUsage] = Field(default_factory=list)
    # the emergence ledger: the final's claims by origin, who originates them, where each
    # first appeared (None: nothing traced)
    ledger: LedgerMetrics | None = None
    # texts embedded, lookups the vectors cache answered, and the time the event loop
    # awaited vectors by the check that asked (None: a session run before they were counted)
    embedding: EmbedCounts | None = None
    # a question session's answer lines: changes per round, flips against a reference
    answers: list[AnswerMetrics] = Field(default_factory=list)
    # in each study it is a sample of (`dagmca stability`): the share of its tensions and
    # claims that recur in other samples, with intervals
    recurrence: list[Recurring] = Field(default_factory=list)
    # what the final cites: its claims cited, uncited, and citations removed (None: no
    # final, or one integrated before they were counted)
    citations: Citations | None = None


def degenerate_reasons(nodes: Iterable[GraphNode]) -> int:
    """The judged decisions the graph keeps marked degenerate: a stub's checks, a
    claim's verdicts and its entailment check. (A merge or duplicate verdict marked so
    writes nothing to the graph: it is undecided, in the run's events.)"""
    count = 0
    for n in nodes:
        if isinstance(n, TensionNode):
            count += sum(c.degenerate for c in n.revisit_checks)
        elif isinstance(n, ClaimNode):
            count += sum(c.degenerate for c in n.checks) + n.degenerate_check
    return count


def agent_key(turn: TurnNode) -> str:
    """Who an agent is across debates: a specialist is its perspective (the context that
    carries over), a coordinator or integrator its place in the tree."""
    return turn.perspective if turn.role is Role.SPECIALIST else turn.agent


def contributions(turns: Sequence[TurnNode]) -> dict[int, dict[str, str]]:
    """round -> agent -> its last content of the round."""
    out: dict[int, dict[str, str]] = defaultdict(dict)
    for t in turns:
        if t.phase in CONTENT:
            out[t.round][t.agent] = t.text
    return out


def round_sibling_similarity(tree: AgentTree, said: dict[str, str]) -> float | None:
    """Mean similarity of siblings' contributions in one round; agents that said nothing
    that round (a ballot round) are not counted."""
    groups = [[said[c] for c in a.children if c in said] for a in tree.agents.values() if not a.is_leaf]
    return measures.mean_sibling_similarity(groups)


def debate_metrics(
    debate: DebateNode, turns: list[TurnNode], rounds: list[RoundNode], cfg: SessionConfig, embedder: Embedder
) -> DebateMetrics:
    tree = cfg.tree()
    laterals = [t for t in turns if t.phase is Phase.LATERAL]
    revisions = Counter(t.agent for t in laterals if t.revised)
    by_round = contributions(turns)
    similarity, lengths = [], []
    for number in sorted(by_round):
        said = by_round[number]
        s = round_sibling_similarity(tree, said)
        if s is not None:
            similarity.append(s)
        lengths.append(round(sum(len(t.split()) for t in said.values()) / len(said), 2))
    last = by_round[max(by_round)] if by_round else {}
    children = [last[c.name] for c in tree.children(tree.root.name) if c.name in last]
    novelty = measures.root_novelty(debate.resolution, children, embedder) if debate.resolution else None
    return DebateMetrics(
        debate=debate.id,
        protocol=debate.protocol,
        rounds=debate.rounds,
        lateral_revision_rate=round(sum(revisions.values()) / len(laterals), 4) if laterals else 0.0,
        per_agent_revision_counts=dict(sorted(revisions.items())),
        convergence_trajectory=[r.convergence_score for r in rounds if r.convergence_score is not None],
        sibling_similarity=similarity,
        collapse_alarm=measures.collapse_alarm(similarity),
        answer_length=lengths,
        bloat_alarm=measures.bloat_alarm(lengths),
        similarity_novelty=novelty,
    )


def session_metrics(
    store: GraphStore,
    session: str,
    embedder: Embedder,
    reference: str | None = None,
    reading: Reading | None = None,
) -> SessionMetrics:
    """`reference`: the right answer of a question session, to count its answer flips;
    `reading`: the rule its answers are read by (as `eval` scores its task: `exact`
    unless told)."""
    nodes = [node_from_record(r) for r in store.nodes(session)]
    head = next(n for n in nodes if isinstance(n, SessionNode))
    if reference is not None and not head.question:
        # nothing to flip: a reference for a session that answered no question means nothing
        raise UserError(
            f"--reference: session {session} asked no question, so it has no answer to count flips of",
            "drop --reference, or give the id of a question session (`dagmca run --question`)",
        )
    cfg = SessionConfig.model_validate_json(head.config)
    turns = [n for n in nodes if isinstance(n, TurnNode)]
    by_id = {t.id: t for t in turns}
    debates = [n for n in nodes if isinstance(n, DebateNode)]
    per_debate = [
        debate_metrics(
            d,
            [t for t in turns if t.debate == d.id],
            sorted(
                (n for n in nodes if isinstance(n, RoundNode) and n.debate == d.id), key=lambda r: r.number
            ),
            cfg,
            embedder,
        )
        for d in debates
    ]
    # agent x tension category: who wrote the turn each tension was flagged at
    tensions = {n.id: n for n in nodes if isinstance(n, TensionNode)}
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for e in store.edges(session, EdgeType.FLAGGED_AT):
        if e.source in tensions and e.target in by_id:
            table[agent_key(by_id[e.target])][tensions[e.source].category.value] += 1
    f = measures.differentiation(table, CATEGORIES)
    # each agent's context: the mean embedding of its contributions
    texts: dict[str, list[str]] = defaultdict(list)
    for t in turns:
        if t.phase in CONTENT:
            texts[agent_key(t)].append(t.text)
    vectors = {k: embedder.embed(v).mean(axis=0) for k, v in texts.items()} if texts else {}
    laterals = [t for t in turns if t.phase is Phase.LATERAL]
    count = len(nodes)
    calls = store.calls(session)
    by_debate = debate_shares(nodes)
    for d in per_debate:
        d.ledger = by_debate.get(d.debate)
    rounds = [n for n in nodes if isinstance(n, RoundNode)]
    answers = [
        found
        for d in debates
        if (found := answer_metrics(
            d.id, [t for t in turns if t.debate == d.id], [r for r in rounds if r.debate == d.id], reference,
            reading,
        )) is not None
    ]  # fmt: skip
    return SessionMetrics(
        session=session,
        debates=per_debate,
        lateral_revision_rate=round(sum(t.revised for t in laterals) / len(laterals), 4) if laterals else 0.0,
        specialization=measures.specialization(table, CATEGORIES),
        context_divergence=measures.context_divergence(vectors),
        differentiation_chi2=f[0] if f else None,
        differentiation_dof=f[1] if f else None,
        differentiation_p=f[2] if f else None,
        agent_categories={k: dict(sorted(v.items())) for k, v in sorted(table.items())},
        nodes=count,
        llm_calls=head.llm_calls,
        tokens=head.tokens,
        cost_usd=head.cost_usd,
        cost_per_node=round(head.cost_usd / count, 8) if count else 0.0,
        tokens_per_node=round(head.tokens / count, 2) if count else 0.0,
        calls_per_node=round(head.llm_calls / count, 4) if count else 0.0,
        omitted_chars=sum(c.omitted_chars for c in calls),
        by_role=role_usage(calls),
        reasks=head.reasks,
        degenerate_texts=sum(bool(getattr(n, "degenerate", False)) for n in nodes),
        degenerate_reasons=degenerate_reasons(nodes),
        dropped_tensions=head.dropped_tensions,
        ledger=ledger_metrics(nodes),
        embedding=EmbedCounts.model_validate_json(head.embedding) if head.embedding else None,
        answers=answers,
        citations=citations(next((n for n in nodes if isinstance(n, FinalNode)), None)),
    )
