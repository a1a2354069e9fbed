"""Members into findings: groups in which every two members were judged a match, as a
merge's groups are joined only by judged pairs. No chain through a third: A matching B
and B matching C put A and C together only when A and C were judged a match too, so a
finding never holds two members the judge called distinct (or left undecided).

The matches are taken most similar first (of equal cosine, the earlier members first),
and each joins the groups of its two members when every member of the one was judged a
match with every member of the other and they share no session (complete linkage over
the judged matches): a group holds at most one member per session, and the work grows
with the matches, not with the ways a permissive judge's matches could be cut into
groups. What no match joins stands alone, a finding seen in one sample."""

from __future__ import annotations

from collections.abc import Sequence

from dagmca.graph import AlignVerdict
from dagmca.stability.judging import Judged
from dagmca.stability.members import Member


def groups(members: Sequence[Member], judged: Sequence[Judged]) -> list[list[Member]]:
    """`members` (in the samples' order) partitioned into groups of judged matches, each
    group in the members' order; the groups by size, then by their first member."""
    order = {m.id: i for i, m in enumerate(members)}
    matches = sorted(
        (
            j
            for j in judged
            if j.verdict is AlignVerdict.MATCH and j.first.id in order and j.second.id in order
        ),
        key=lambda j: (-round(j.similarity, 4), *sorted((order[j.first.id], order[j.second.id]))),
    )
    matched = {frozenset((j.first.id, j.second.id)) for j in matches}
    group_of: dict[str, list[Member]] = {m.id: [m] for m in members}
    for j in matches:
        one, other = group_of[j.first.id], group_of[j.second.id]
        if one is other or {m.session for m in one} & {m.session for m in other}:
            continue
        if all(frozenset((a.id, b.id)) in matched for a in one for b in other):
            joined = sorted([*one, *other], key=lambda m: order[m.id])
            for m in joined:
                group_of[m.id] = joined
    found = list({id(g): g for g in group_of.values()}.values())
    return sorted(found, key=lambda g: (-len(g), order[g[0].id]))
