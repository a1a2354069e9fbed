"""The invariants of a study's findings (`dagmca check STUDY`): each finding's
recurrence adds up, it is SEEN_IN exactly the sessions it names and AS exactly one
member of its kind in each, and every two of its members were judged a match (the
clique rule: no finding is joined through a third)."""

from __future__ import annotations

from itertools import combinations

from dagmca.graph import FINDINGS_SESSION, AlignVerdict, EdgeType, FindingKind, NodeKind, NodeRecord
from dagmca.store.base import GraphStore
from dagmca.store.findings import study_findings

MEMBER_KINDS = {
    FindingKind.TENSION.value: NodeKind.TENSION,
    FindingKind.CLAIM.value: NodeKind.CLAIM,
    FindingKind.ANSWER.value: NodeKind.FINAL,
}


def check_findings(store: GraphStore, study: str) -> list[str]:
    """Broken invariants of the study's findings; empty when all hold."""
    findings = study_findings(store, study)
    if not findings:
        return [f"no findings of study {study}"]
    ids = {f.id for f in findings}
    out: dict[tuple[str, EdgeType], list[str]] = {}
    matched: set[frozenset[str]] = set()  # pairs of members judged a match
    for e in store.edges(FINDINGS_SESSION):
        if e.source not in ids:
            continue
        if e.type is not EdgeType.COMPARED_WITH:
            out.setdefault((e.source, e.type), []).append(e.target)
        elif e.props.get("verdict") == AlignVerdict.MATCH:
            matched.add(frozenset((str(e.props.get("member", "")), e.target)))
    problems: list[str] = []
    seen: dict[str, str] = {}
    for f in findings:
        problems += _counts(f)
        sessions, members = _strings(f, "sessions"), _strings(f, "members")
        if sorted(out.get((f.id, EdgeType.SEEN_IN), [])) != sorted(sessions):
            problems.append(f"finding {f.id}: its SEEN_IN edges are not its sessions")
        if sorted(out.get((f.id, EdgeType.AS), [])) != sorted(members):
            problems.append(f"finding {f.id}: its AS edges are not its members")
        for session, member in zip(sessions, members, strict=False):
            problems += _member(store, f, session, member)
            if member in seen:
                problems.append(f"member {member} is in two findings: {seen[member]} and {f.id}")
            seen[member] = f.id
        for a, b in combinations(members, 2):
            if frozenset((a, b)) not in matched:
                problems.append(f"finding {f.id}: {a} and {b} were not judged a match")
    return problems


def _strings(f: NodeRecord, key: str) -> list[str]:
    value = f.props.get(key)
    return [str(v) for v in value] if isinstance(value, list) else []


def _counts(f: NodeRecord) -> list[str]:
    p = f.props
    k, n, sessions = p.get("k"), p.get("n"), _strings(f, "sessions")
    if not isinstance(k, int) or not isinstance(n, int) or not 1 <= k <= n:
        return [f"finding {f.id}: k {k!r} of n {n!r} is not a recurrence"]
    problems = []
    if p.get("aligns") not in MEMBER_KINDS:
        problems.append(f"finding {f.id}: aligns {p.get('aligns')!r}, not tension, claim or answer")
    if len(sessions) != k or len(set(sessions)) != k or len(_strings(f, "members")) != k:
        problems.append(f"finding {f.id}: k is {k}, but it names {len(sessions)} sessions")
    samples = _strings(f, "samples")
    if len(samples) != n or not set(sessions) <= set(samples):
        problems.append(f"finding {f.id}: n is {n}, but its samples are {len(samples)} or miss its sessions")
    rate, lo, hi = p.get("rate"), p.get("lo"), p.get("hi")
    numbers = all(isinstance(x, int | float) for x in (rate, lo, hi))
    if not numbers or not 0 <= lo <= rate <= hi <= 1 or abs(rate - k / n) > 1e-4:  # type: ignore[operator]
        problems.append(f"finding {f.id}: rate {rate} not k/n in [{lo}, {hi}]")
    if p.get("core") != (2 * k >= n):
        problems.append(f"finding {f.id}: core is {p.get('core')}, but it is in {k} of {n} samples")
    return problems


def _member(store: GraphStore, f: NodeRecord, session: str, member: str) -> list[str]:
    node = store.get_node(session)
    if node is None or node.kind is not NodeKind.SESSION:
        return [f"finding {f.id}: SEEN_IN {session}, which is not a Session"]
    found = store.get_node(member)
    want = MEMBER_KINDS.get(str(f.props.get("aligns")))
    if found is None or found.kind is not want or found.session != session:
        return [f"finding {f.id}: AS {member}, which is not a {want.value if want else '?'} of {session}"]
    return []
