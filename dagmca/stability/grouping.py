"""Members into findings: groups in which every two members were judged a match, as a
merge's groups are joined only by judged pairs. No chain through a third: A matching B
and B matching C put A and C together only when A and C were judged a match too, so a
finding never holds two members the judge called distinct (or left undecided).

Members of one session are never compared, so a group holds at most one per session.
The largest groups are taken first (ties: the higher least similarity inside the group,
then the earliest members), each member once; what no match joins stands alone, a
finding seen in one sample."""

from __future__ import annotations

from collections.abc import Sequence

from dagmca.graph import AlignVerdict
from dagmca.stability.judging import Judged
from dagmca.stability.members import Member


def groups(members: Sequence[Member], judged: Sequence[Judged]) -> list[list[Member]]:
    """`members` (in the samples' order) partitioned into groups of judged matches, each
    group in the members' order, the groups by size, then by their first member."""
    import networkx as nx  # here: only a study pays for it

    order = {m.id: i for i, m in enumerate(members)}
    by_id = {m.id: m for m in members}
    similarity: dict[frozenset[str], float] = {}
    g = nx.Graph()
    for j in judged:
        if j.verdict is AlignVerdict.MATCH and j.first.id in order and j.second.id in order:
            g.add_edge(j.first.id, j.second.id)
            similarity[frozenset((j.first.id, j.second.id))] = j.similarity

    def rank(clique: list[str]) -> tuple[int, float, list[int]]:
        weakest = min(similarity[frozenset((a, b))] for a in clique for b in clique if order[a] < order[b])
        return -len(clique), -weakest, sorted(order[m] for m in clique)

    found: list[list[str]] = []
    while g.number_of_edges():
        best = min((c for c in nx.find_cliques(g) if len(c) > 1), key=rank)
        found.append(sorted(best, key=order.__getitem__))
        g.remove_nodes_from(best)
        g.remove_nodes_from([n for n in list(g.nodes) if g.degree(n) == 0])
    grouped = {m for c in found for m in c}
    found += [[m.id] for m in members if m.id not in grouped]
    found.sort(key=lambda c: (-len(c), order[c[0]]))
    return [[by_id[i] for i in c] for c in found]
