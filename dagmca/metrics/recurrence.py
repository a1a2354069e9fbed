"""How much of a session recurs across the samples of a study (`dagmca stability`): of
its tensions (or claims) aligned in the study, how many are in a finding that two or
more samples reach. Each member of a study's sessions is in exactly one finding of its
kind (a finding seen once included), so the counts are read from the findings alone."""

from __future__ import annotations

from collections.abc import Sequence

from dagmca.graph import FindingKind, NodeRecord, Strict


class Recurring(Strict):
    """Of one session's members of one kind in a study, those in a finding of two or
    more samples, with the Wilson interval of the share."""

    study: str
    session: str
    kind: FindingKind
    recurring: int
    total: int
    share: float | None
    lo: float
    hi: float


def counted(findings: Sequence[NodeRecord], session: str) -> dict[tuple[str, FindingKind], tuple[int, int]]:
    """(study, kind) -> (recurring, total) for `session`, from Finding records."""
    out: dict[tuple[str, FindingKind], tuple[int, int]] = {}
    for f in findings:
        sessions = f.props.get("sessions")
        if not isinstance(sessions, list) or session not in sessions:
            continue
        key = (str(f.props.get("study", "")), FindingKind(str(f.props.get("aligns"))))
        recurring, total = out.get(key, (0, 0))
        k = f.props.get("k")
        out[key] = (recurring + (1 if isinstance(k, int) and k >= 2 else 0), total + 1)
    return out
