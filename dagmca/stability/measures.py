"""The measures of a study, as pure functions of its groups: each finding's recurrence
k/n with its Wilson interval (the evaluation's), the share of each session's tensions
and claims that recur, the Jaccard overlap of every two samples, and what each model
reaches. Nothing here reads a store or calls a model: a session's recurrence in the
studies it is a sample of is read from their Finding records, handed in.

The intervals treat the findings (or members) counted as independent trials: they say
how far a share on this few can move, not more."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from dagmca.evaluation.stats import wilson
from dagmca.graph import FindingKind, NodeRecord
from dagmca.metrics.recurrence import Recurring, counted
from dagmca.stability.members import Sample
from dagmca.stability.models import FindingRow, ModelReach, Overlap


def recurrence(k: int, n: int) -> tuple[float, float, float]:
    """k of n samples: the rate and its 95% Wilson interval, rounded to 4 places."""
    lo, hi = wilson(k, n)
    return round(k / n, 4) if n else 0.0, round(lo, 4), round(hi, 4)


def is_core(k: int, n: int) -> bool:
    """In at least half the samples."""
    return 2 * k >= n and n > 0


def _share(part: int, whole: int) -> tuple[float | None, float, float]:
    lo, hi = wilson(part, whole)
    return (round(part / whole, 4) if whole else None), round(lo, 4), round(hi, 4)


def shares(study: str, samples: Sequence[Sample], findings: Sequence[FindingRow]) -> list[Recurring]:
    """For each session and kind it has, the share of its members in a finding seen in
    two or more samples."""
    recurring = {m for f in findings if f.k >= 2 for m in f.members}
    rows = []
    for s in samples:
        for kind in (FindingKind.TENSION, FindingKind.CLAIM):
            members = s.of(kind)
            if members is not None:
                rows.append(_recurring(study, s.session, kind, sum(1 for m in members if m.id in recurring),
                                       len(members)))  # fmt: skip
    return rows


def session_recurrence(findings: Sequence[NodeRecord], session: str) -> list[Recurring]:
    """What recurs of `session` in each study it is a sample of, from the studies'
    Finding records."""
    return [
        _recurring(study, session, kind, recurring, total)
        for (study, kind), (recurring, total) in counted(findings, session).items()
        if kind is not FindingKind.ANSWER
    ]


def _recurring(study: str, session: str, kind: FindingKind, part: int, whole: int) -> Recurring:
    share, lo, hi = _share(part, whole)
    return Recurring(
        study=study, session=session, kind=kind, recurring=part, total=whole, share=share, lo=lo, hi=hi
    )


def overlaps(samples: Sequence[Sample], findings: Sequence[FindingRow]) -> list[Overlap]:
    """For every two samples and each kind both have: the findings both reach over
    those either reaches."""
    rows = []
    for a, b in combinations(samples, 2):
        for kind in FindingKind:
            if a.of(kind) is None or b.of(kind) is None:
                continue
            of_kind = [f for f in findings if f.kind is kind]
            both = sum(1 for f in of_kind if a.session in f.sessions and b.session in f.sessions)
            either = sum(1 for f in of_kind if a.session in f.sessions or b.session in f.sessions)
            jac, lo, hi = _share(both, either)
            rows.append(
                Overlap(first=a.session, second=b.session, kind=kind, shared=both, union=either, jaccard=jac,
                        lo=lo, hi=hi)
            )  # fmt: skip
    return rows


def reach(samples: Sequence[Sample], findings: Sequence[FindingRow]) -> tuple[list[ModelReach], list[str]]:
    """With two or more models among the samples: what each model's sessions reach, and
    the findings every model reaches. Otherwise nothing."""
    models = list(dict.fromkeys(s.model for s in samples))
    if len(models) < 2:
        return [], []
    rows = []
    for model in models:
        own = [s.session for s in samples if s.model == model]
        found = [f for f in findings if set(f.sessions) & set(own)]
        rows.append(ModelReach(model=model, sessions=own, findings=[f.id for f in found],
                               core=sum(1 for f in found if f.core)))  # fmt: skip
    every = [f.id for f in findings if all(f.id in r.findings for r in rows)]
    return rows, every
