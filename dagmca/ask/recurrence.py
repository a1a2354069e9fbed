"""How often a retrieved node recurs across samples of its passage: a tension, claim or
answer aligned into a finding by `dagmca stability` says "in 4 of 5 runs" beside
itself, in the answer's prompt and its citations. A node in findings of several studies
takes the study of the most samples (of equal size, the latest written)."""

from __future__ import annotations

from collections.abc import Iterable

from dagmca.graph import FINDINGS_SESSION, EdgeType, JSONScalar, NodeKind
from dagmca.store.base import GraphStore


def _count(value: JSONScalar | list[str] | None) -> int:
    return value if isinstance(value, int) else 0


def recurrence_of(store: GraphStore, ids: Iterable[str]) -> dict[str, str]:
    """Each of `ids` that is a finding's member, with its recurrence in words."""
    wanted = set(ids)
    members = [e for e in store.edges(FINDINGS_SESSION, EdgeType.AS) if e.target in wanted]
    if not members:
        return {}
    findings = {n.id: n for n in store.nodes(FINDINGS_SESSION, NodeKind.FINDING)}
    chosen: dict[str, tuple[int, int, str]] = {}  # member -> (n, place, finding)
    for place, e in enumerate(members):
        f = findings.get(e.source)
        if f is None:
            continue
        n = _count(f.props.get("n"))
        if e.target not in chosen or (n, place) >= chosen[e.target][:2]:
            chosen[e.target] = (n, place, f.id)
    return {
        member: f"in {_count(findings[f].props.get('k'))} of {n} runs" for member, (n, _, f) in chosen.items()
    }
