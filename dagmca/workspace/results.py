"""What the Python API hands back: plain, typed results that hold no open resources."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dagmca.config import SessionConfig
from dagmca.graph import (
    ClaimNode,
    EdgeRecord,
    FinalNode,
    NodeKind,
    NodeRecord,
    SessionNode,
    SessionStatus,
    Strict,
    node_from_record,
)
from dagmca.metrics.ledger import ClaimLine, LedgerShares, claim_lines, shares


@dataclass(frozen=True)
class RoleShare:
    """What one role's calls on one model made and cost in a run."""

    role: str
    model: str
    calls: int
    tokens: int
    cost_usd: float


@dataclass(frozen=True)
class Spend:
    """What one run of a session spent: requests made (cache hits excluded), tokens and
    cost, with what was answered from the cache, failed, was retried or repaired, and
    was refused by a budget. `earlier_*`: what earlier runs of the session (a resume's,
    a revisit's) spent, as far as the budgets counted it."""

    calls: int
    cache_hits: int
    failures: int
    refused: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    cached_tokens: int = 0
    invalid_outputs: int = 0
    retries: int = 0
    repairs: int = 0
    faults: dict[str, int] = field(default_factory=dict)
    earlier_calls: int = 0
    earlier_tokens: int = 0
    earlier_cost_usd: float = 0.0
    model: str = ""
    prices: str = ""  # where the prices came from
    by_role: list[RoleShare] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class RunResult:
    """A finished (or ended) session: its Session node, its final answer when one was
    written, what this run spent, and where its graph and reports are."""

    session: SessionNode
    final: FinalNode | None
    spend: Spend
    store: str
    reports: Path
    problems: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return self.session.id

    @property
    def status(self) -> SessionStatus:
        return self.session.status

    @property
    def settings(self) -> SessionConfig:
        """The settings the session ran with (a resumed one's own, with what the resume
        was told to change)."""
        return SessionConfig.model_validate_json(self.session.config)


@dataclass(frozen=True)
class RevisitResult:
    """A revisit: how many open stubs were judged against the new context, which the
    judge found answered (superseded), which were explored as new branches, and the
    final answer integrated again (None when nothing changed)."""

    session: str
    checked: int
    superseded: list[str]
    explored: list[str]
    final: FinalNode | None
    spend: Spend


class LedgerReport(Strict):
    """A session's traced claims: each with its origin and the texts it derives from;
    the shares by origin of the final answer's claims (None when none is traced);
    what this tracing left untraced (a budget spent, a call failed) and the calls it
    made."""

    session: str
    claims: list[ClaimLine]
    final: LedgerShares | None = None
    untraced: int = 0
    calls: int = 0

    @classmethod
    def of(
        cls, session: str, records: Sequence[NodeRecord], edges: Sequence[EdgeRecord], **counts: int
    ) -> LedgerReport:
        """The report of a session's stored nodes and edges."""
        nodes = [node_from_record(r) for r in records]
        lines = claim_lines(nodes, edges)
        finals = {r.id for r in records if r.kind is NodeKind.FINAL}
        current = {c.id for c in lines}
        of_final = [
            n for n in nodes if isinstance(n, ClaimNode) and n.id in current and n.stated_in in finals
        ]
        return cls(session=session, claims=lines, final=shares(of_final), **counts)
