"""A synthetic session of any size, shaped like a real one and passing `check`:
for store and export benchmarks, and for tests that need scale, not content."""

from __future__ import annotations

import random

from dagmca.graph import (
    AgentNode,
    DebateNode,
    DebateOrigin,
    EdgeRecord,
    EdgeType,
    FinalNode,
    GraphNode,
    NodeRecord,
    Phase,
    Role,
    RoundNode,
    SessionNode,
    SynthesisNode,
    TensionCategory,
    TensionNode,
    TensionStatus,
    TurnNode,
    edge,
)

_WORDS = [
    *("fairness", "evidence", "harm", "memory", "power", "value", "trust", "risk", "law", "market"),
    *("scale", "duty", "freedom", "meaning", "culture", "attention", "feedback", "constraint"),
    *("language", "revenue"),
]
ROUNDS, TURNS_PER_ROUND, TENSIONS = 3, 24, 20  # per debate: 1 + 3 + 72 + 20 = 96 nodes
_STAMP = "2026-01-01T00:00:00.000+00:00"


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def synthetic_session(
    n_nodes: int, n_edges: int, *, session: str = "synthetic", seed: int = 0, tensions: int = TENSIONS
) -> tuple[list[NodeRecord], list[EdgeRecord]]:
    """Exactly `n_nodes` nodes (at least about 100) and exactly `n_edges` edges when
    that is at least the structural minimum: structure and provenance first, then
    REFERENCES between turns to fill up. Deterministic for a seed."""
    rng = random.Random(seed)
    s = session
    nodes: list[GraphNode] = [
        SessionNode(
            id=s,
            session=s,
            passage=_text(rng, 60),
            passage_sha256="0" * 64,
            title="synthetic",
            config="{}",
            model="synthetic",
            started_at=_STAMP,
            finished_at=_STAMP,
            status="done",
            created_at=_STAMP,
        )
    ]
    agents = [
        AgentNode(
            id=f"{s}/agent/L1N{i}",
            session=s,
            name=f"L1N{i}",
            role=Role.SPECIALIST,
            perspective=_WORDS[i],
            level=1,
            created_at=_STAMP,
        )
        for i in range(1, 9)
    ]
    nodes += agents
    must: list[EdgeRecord] = []
    extra: list[EdgeRecord] = []
    per_debate = 1 + ROUNDS + ROUNDS * TURNS_PER_ROUND + tensions
    n_debates = max(1, (n_nodes - len(nodes) - 2) // per_debate)
    turns_all: list[str] = []
    open_tensions: list[TensionNode] = []
    debates: list[DebateNode] = []
    for d in range(n_debates):
        if d == 0:
            debate = DebateNode(
                id=f"{s}/main",
                session=s,
                origin=DebateOrigin.MAIN,
                question=_text(rng, 9),
                resolution=_text(rng, 30),
                depth=0,
                rounds=ROUNDS,
                status="done",
                created_at=_STAMP,
            )
        else:
            parent = debates[rng.randrange(len(debates))]
            pick = next((t for t in open_tensions if t.debate == parent.id), None) or open_tensions[0]
            open_tensions.remove(pick)
            pick.status = TensionStatus.EXPLORED
            debate = DebateNode(
                id=f"{parent.id.split('/', 1)[0]}/d{d}",
                session=s,
                origin=DebateOrigin.BRANCH,
                question=pick.question,
                resolution=_text(rng, 30),
                depth=parent.depth + 1,
                rounds=ROUNDS,
                status="done",
                created_at=_STAMP,
            )
            must += [
                edge(debate.id, parent.id, EdgeType.BRANCHES_FROM, s),
                edge(debate.id, pick.id, EdgeType.EXPLORES, s),
            ]
        debates.append(debate)
        nodes.append(debate)
        must.append(edge(debate.id, s, EdgeType.IN_SESSION, s))
        turn_ids: list[str] = []
        for r in range(1, ROUNDS + 1):
            rnd = RoundNode(
                id=f"{debate.id}/r{r}",
                session=s,
                debate=debate.id,
                number=r,
                root_output=_text(rng, 20),
                convergence_score=round(rng.random(), 3),
                created_at=_STAMP,
            )
            nodes.append(rnd)
            must.append(edge(debate.id, rnd.id, EdgeType.HAS_ROUND, s))
            if r > 1:
                must.append(edge(f"{debate.id}/r{r - 1}", rnd.id, EdgeType.NEXT, s))
            for i in range(TURNS_PER_ROUND):
                agent = agents[i % len(agents)]
                phase = Phase.RESPOND if i < len(agents) else Phase.LATERAL
                turn = TurnNode(
                    id=f"{rnd.id}/t{i}",
                    session=s,
                    debate=debate.id,
                    agent=agent.name,
                    role=agent.role,
                    perspective=agent.perspective,
                    phase=phase,
                    round=r,
                    text=_text(rng, 40),
                    revised=phase is Phase.LATERAL and rng.random() < 0.5,
                    tokens=rng.randrange(50, 400),
                    created_at=_STAMP,
                )
                nodes.append(turn)
                turn_ids.append(turn.id)
                must.append(edge(turn.id, rnd.id, EdgeType.IN_ROUND, s))
                extra.append(edge(turn.id, agent.id, EdgeType.BY, s))
        for k in range(tensions):
            observer = rng.choice(("dialectical", "skeptical", "pragmatic"))
            flagged = rng.choice(turn_ids)
            tension = TensionNode(
                id=f"{debate.id}/x{k}",
                session=s,
                debate=debate.id,
                question=_text(rng, 8) + "?",
                urgency=round(rng.random(), 2),
                rationale=_text(rng, 12),
                excerpt=_text(rng, 6),
                observer=observer,
                category=rng.choice(list(TensionCategory)),
                flags=[f"{observer}@{flagged}"],
                created_at=_STAMP,
            )
            nodes.append(tension)
            open_tensions.append(tension)
            extra.append(edge(tension.id, flagged, EdgeType.FLAGGED_AT, s, key=observer, observer=observer))
        turns_all += turn_ids
    branches = [d for d in debates if d.origin is DebateOrigin.BRANCH]
    if len(branches) >= 2:
        syn = SynthesisNode(
            id=f"{s}/syn1",
            session=s,
            resolution=_text(rng, 30),
            reason="synthetic",
            similarity=0.8,
            created_at=_STAMP,
        )
        nodes.append(syn)
        must += [edge(b.id, syn.id, EdgeType.MERGES_INTO, s) for b in branches[:2]]
    last = debates[-1]
    for k in range(tensions, tensions + max(0, n_nodes - len(nodes) - 1)):  # pad to exactly n_nodes
        pad = TensionNode(
            id=f"{last.id}/x{k}",
            session=s,
            debate=last.id,
            question=_text(rng, 8) + "?",
            urgency=round(rng.random(), 2),
            rationale="",
            excerpt="",
            observer="skeptical",
            category=TensionCategory.GAP,
            created_at=_STAMP,
        )
        nodes.append(pad)
    final = FinalNode(id=f"{s}/final", session=s, text=_text(rng, 60), created_at=_STAMP)
    nodes.append(final)
    must += [edge(final.id, d.id, EdgeType.INTEGRATES, s) for d in debates[:8]]

    edges = must + extra
    seen = {(e.source, e.target, e.type) for e in edges}
    while len(edges) < n_edges and len(turns_all) > 1:
        a, b = rng.sample(turns_all, 2)
        if (a, b, EdgeType.REFERENCES) not in seen:
            seen.add((a, b, EdgeType.REFERENCES))
            edges.append(edge(a, b, EdgeType.REFERENCES, s))
    records = [n.to_record() for n in nodes]
    return records, edges[: max(n_edges, len(must))]
