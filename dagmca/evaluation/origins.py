"""What each arm's final answers add and what they cite: the origins of their claims
(the emergence ledger), those of the control (the `single` arm's answers traced against
the arm's own sources, which the lone agent never read), the arm's `emergent` share
above the control's, and the share of their claims that cite a section.

A share alone has no scale: the procedure calls some of any answer's claims `single`,
`recombined` or `emergent` by chance, since a lone agent's answer says much of what a
debate's agents said. The control measures that chance on the same task's sources, so
the debate's `emergent` share counts only above it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence

from dagmca.evaluation.records import RunRecord
from dagmca.evaluation.stats import bootstrap_share, difference_interval, wilson
from dagmca.graph import ClaimOrigin, Strict


class Share(Strict):
    value: float
    lo: float
    hi: float


class ArmLedger(Strict):
    """The origins of an arm's final claims (or of its control's), pooled over its
    traced sessions, a field for each ClaimOrigin. Each interval is the wider of the
    Wilson interval over the claims and a bootstrap over tasks (the claims of one answer
    are not independent of each other)."""

    sessions: int
    claims: int
    untraced: int
    single: Share
    recombined: Share
    emergent: Share
    # the origins the ledger tells apart since it checks entailment (None: a report before)
    passage: Share | None = None
    inferred: Share | None = None
    unsupported: Share | None = None
    # the integrator's own claims, never the group's (None: a report before they were told apart)
    integrator: Share | None = None

    def by_origin(self) -> Iterator[tuple[ClaimOrigin, Share | None]]:
        """Each origin's share, in ClaimOrigin's order."""
        for origin in ClaimOrigin:
            share = getattr(self, origin.value)
            assert share is None or isinstance(share, Share)
            yield origin, share


class ShareDifference(Strict):
    """One pooled share minus another over the tasks both were measured on, its interval
    bootstrapped over those tasks (paired: a task's two shares drawn together), with
    Newcombe's interval from Wilson's over tasks too below 10 tasks (`few_tasks`)."""

    value: float
    lo: float
    hi: float
    tasks: int
    few_tasks: bool = False


class ControlRow(Strict):
    """One control: the `single` arm's final answer to a task (`session`) traced against
    the sources of `arm`'s session on the same task and repeat (`against`: its passage,
    turns, resolutions and syntheses), with the claims' origins, those a budget or a
    failed call left untraced, and the calls it made (recorded under `session`). Kept in
    the Evaluation's summary, so a rerun reads it back and asks nothing."""

    arm: str
    task: str
    repeat: int
    session: str
    against: str
    origins: dict[str, int]
    untraced: int = 0
    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0


class ArmCitations(Strict):
    """What an arm's final answers cite: their sentences that make a claim, the share of
    those that cite a section of the graph they were given (with the wider of Wilson's
    interval over the claims and a bootstrap over tasks), how many cite none, and the
    citations removed for naming no section they were given."""

    sessions: int
    claims: int
    cited: Share
    uncited: int
    removed: int


Traced = tuple[str, Mapping[str, int], int]  # a traced final: its task, claims by origin, untraced


def pooled(counts: Sequence[tuple[int, int]], seed: int = 0) -> Share:
    """A share pooled over groups (tasks) given as (k, n), n > 0 in one at least."""
    k, n = sum(c for c, _ in counts), sum(m for _, m in counts)
    w_lo, w_hi = wilson(k, n)
    b_lo, b_hi = bootstrap_share(counts, seed=seed)
    return Share(value=k / n, lo=min(w_lo, b_lo), hi=max(w_hi, b_hi))


def ledger_of(traced: Sequence[Traced], seed: int = 0) -> ArmLedger | None:
    """The shares by origin of the claims of `traced` finals; None when none has any."""
    kept = [t for t in traced if sum(t[1].values())]
    if not kept:
        return None
    by_task: dict[str, list[Mapping[str, int]]] = defaultdict(list)
    for task, origins, _ in kept:
        by_task[task].append(origins)

    def share(origin: ClaimOrigin) -> Share:
        counts = [
            (sum(o.get(origin.value, 0) for o in os), sum(sum(o.values()) for o in os))
            for os in by_task.values()
        ]
        return pooled(counts, seed)

    return ArmLedger(
        sessions=len(kept),
        claims=sum(sum(o.values()) for _, o, _ in kept),
        untraced=sum(u for _, _, u in kept),
        **{origin.value: share(origin) for origin in ClaimOrigin},
    )


def arm_ledger(runs: Sequence[RunRecord], seed: int = 0) -> ArmLedger | None:
    """The origins of the claims of `runs`' traced finals; None when none was traced."""
    return ledger_of([(r.task, r.origins, r.untraced) for r in runs if r.origins], seed)


def control_shares(controls: Sequence[ControlRow], seed: int = 0) -> ArmLedger | None:
    """The origins of the claims the controls traced; None when they traced none."""
    return ledger_of([(c.task, c.origins, c.untraced) for c in controls], seed)


def above_control(
    runs: Sequence[RunRecord], controls: Sequence[ControlRow], seed: int = 0
) -> ShareDifference | None:
    """The arm's `emergent` share minus its control's, over the (task, repeat)s where
    both were traced, a task's repeats pooled; None when there is no such pair."""
    mine = {(r.task, r.repeat): r.origins for r in runs if sum(r.origins.values())}
    emergent = ClaimOrigin.EMERGENT.value
    groups: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for c in controls:
        own = mine.get((c.task, c.repeat))
        if own is None or not sum(c.origins.values()):
            continue
        g = groups[c.task]
        g[0] += own.get(emergent, 0)
        g[1] += sum(own.values())
        g[2] += c.origins.get(emergent, 0)
        g[3] += sum(c.origins.values())
    if not groups:
        return None
    rows = [(a, n, b, m) for a, n, b, m in groups.values()]
    arm_share = sum(r[0] for r in rows) / sum(r[1] for r in rows)
    value = arm_share - sum(r[2] for r in rows) / sum(r[3] for r in rows)
    lo, hi, few = difference_interval(rows, seed=seed)
    return ShareDifference(value=value, lo=min(lo, value), hi=max(hi, value), tasks=len(rows), few_tasks=few)


def arm_citations(runs: Sequence[RunRecord], seed: int = 0) -> ArmCitations | None:
    """What `runs`' finals cite; None when none was counted (no final, or finals from
    before citations were counted)."""
    counted = [r for r in runs if r.citations is not None]
    claims = sum(r.citations.claims for r in counted if r.citations is not None)
    if not claims:
        return None
    by_task: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in counted:
        assert r.citations is not None
        by_task[r.task][0] += r.citations.cited
        by_task[r.task][1] += r.citations.claims
    cited = sum(k for k, _ in by_task.values())
    return ArmCitations(
        sessions=len(counted), claims=claims, cited=pooled([(k, n) for k, n in by_task.values()], seed),
        uncited=claims - cited, removed=sum(r.citations.removed for r in counted if r.citations is not None),
    )  # fmt: skip
