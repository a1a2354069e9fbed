"""A study in the graph: a `Finding` node per group, `SEEN_IN` each session it is in and
`AS` its member there, and a `COMPARED_WITH` relationship for every pair judged (a
match or not, with the verdict in both orders and the reason): from the finding of the
earlier sample's member (named as `member`, its key) to the other member. Every member
is in one finding of its kind (a finding seen once too), so every pair has one.

All of them carry FINDINGS_SESSION as their `session`: a finding spans sessions, so each
session's own graph (and its check) stays what the session wrote, and whole-store
readings find every study's findings in one place. A finding's id is the study's and its
place among the study's findings of its kind, so writing a study again with the same
inputs rewrites the same nodes."""

from __future__ import annotations

from collections.abc import Sequence

from dagmca.graph import (
    FINDINGS_SESSION,
    EdgeRecord,
    EdgeType,
    FindingKind,
    FindingNode,
    NodeRecord,
    edge,
)
from dagmca.stability.judging import Judged
from dagmca.stability.models import FindingRow


def finding_id(study: str, kind: FindingKind, number: int) -> str:
    return f"{study}/{kind.value}-{number}"


def finding_records(
    study: str,
    findings: Sequence[FindingRow],
    judged: Sequence[Judged],
    *,
    samples: dict[FindingKind, list[str]],
    inputs: str,
    prompt_version: str,
) -> tuple[list[NodeRecord], list[EdgeRecord]]:
    """The study's nodes and relationships; `samples`: the sessions counted in each
    kind's n."""
    nodes: list[NodeRecord] = []
    edges: list[EdgeRecord] = []
    for f in findings:
        node = FindingNode(
            id=f.id, session=FINDINGS_SESSION, study=study, aligns=f.kind, text=f.text, k=f.k, n=f.n,
            rate=f.rate, lo=f.lo, hi=f.hi, core=f.core, sessions=f.sessions, members=f.members,
            samples=samples[f.kind], models=f.models, origins=f.origins, inputs=inputs,
            prompt_version=prompt_version,
        )  # fmt: skip
        nodes.append(node.to_record())
        edges += [edge(f.id, s, EdgeType.SEEN_IN, FINDINGS_SESSION) for s in f.sessions]
        edges += [edge(f.id, m, EdgeType.AS, FINDINGS_SESSION) for m in f.members]
    finding_of = {m: f.id for f in findings for m in f.members}
    for j in judged:
        source = finding_of[j.first.id]
        props = {"key": j.first.id, "member": j.first.id, **j.props()}
        edges.append(edge(source, j.second.id, EdgeType.COMPARED_WITH, FINDINGS_SESSION, **props))
    return nodes, edges
