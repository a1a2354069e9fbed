"""What a study prints (`dagmca stability`, `run --samples`): its projected cost before
the judge is asked, then the findings by recurrence (the core, in at least half the
samples, first; how many appeared once), the share of each session's tensions and claims
that recur, the overlap of every two samples, and with several models what each reaches
and what all reach. `--json` is the report's own JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table

from dagmca.cli.console import noted, out, said
from dagmca.text import clip

if TYPE_CHECKING:  # types only: the report's models are imported by the command that runs it
    from dagmca.stability.models import AlignCost, FindingRow, SampleInfo, StabilityReport


def estimate_line(cost: AlignCost) -> str:
    pairs = ", ".join(f"{n} {kind} pairs" for kind, n in cost.pairs.items()) or "no pair for the judge"
    scored = f"; {cost.scored} answer pairs by the scorer (no call)" if cost.scored else ""
    return (
        f"alignment projected: {pairs}{scored}: {cost.calls:,} judge calls (both orders), "
        f"{cost.prompt_tokens:,} prompt tokens, at most {cost.completion_tokens_max:,} completion tokens, "
        f"at most ${cost.cost_usd_max:.4f} ({cost.model or 'the judge'}; prices: {cost.prices})"
    )


def tell_estimate(cost: AlignCost) -> None:
    noted(estimate_line(cost))


def sample_line(info: SampleInfo, total: int) -> str:
    how = "ran" if info.ran else "found ended"
    varied = f"seed {info.seed}" + (
        f", temperature {info.temperature}" if info.temperature is not None else ""
    )
    model = info.model or "default model"
    return f"[{info.sample}/{total}] {info.session} ({model}; {varied}): {how}, {info.status}"


def _rate(f: FindingRow) -> str:
    return f"{f.k}/{f.n} [{f.lo:.2f}, {f.hi:.2f}]"


def findings_table(report: StabilityReport) -> Table:
    table = Table(
        title=f"findings of {report.study} by recurrence (k of n samples, 95% Wilson interval)",
        title_justify="left",
    )
    for name in ("", "kind", "k/n [95% CI]", "finding", "seen in", "origins"):
        table.add_column(name, overflow="fold")
    for f in report.findings:
        mark = "core" if f.core else ("once" if f.k == 1 else "")
        origins = "/".join(f.origins) if f.origins else ""
        table.add_row(mark, f.kind, _rate(f), escape(clip(f.text, 160)), ", ".join(f.sessions), origins)
    return table


def shares_table(report: StabilityReport) -> Table:
    table = Table(
        title="what recurs of each session (in a finding of two or more samples)", title_justify="left"
    )
    for name in ("session", "kind", "recurring", "share [95% CI]"):
        table.add_column(name)
    for s in report.shares:
        share = f"{s.share:.0%} [{s.lo:.0%}, {s.hi:.0%}]" if s.share is not None else "-"
        table.add_row(s.session, s.kind, f"{s.recurring}/{s.total}", share)
    return table


def overlaps_table(report: StabilityReport) -> Table:
    table = Table(title="overlap of every two samples (Jaccard: shared over either's)", title_justify="left")
    for name in ("sessions", "kind", "shared/either", "Jaccard [95% CI]"):
        table.add_column(name)
    for o in report.overlaps:
        jac = f"{o.jaccard:.2f} [{o.lo:.2f}, {o.hi:.2f}]" if o.jaccard is not None else "-"
        table.add_row(f"{o.first} & {o.second}", o.kind, f"{o.shared}/{o.union}", jac)
    return table


def models_table(report: StabilityReport) -> Table:
    table = Table(title="what each model reaches", title_justify="left")
    for name in ("model", "sessions", "findings", "of the core"):
        table.add_column(name)
    for m in report.models:
        table.add_row(m.model, ", ".join(m.sessions), str(len(m.findings)), str(m.core))
    return table


def show_report(report: StabilityReport, as_json: bool) -> None:
    """The report, then its notes (on stderr)."""
    if as_json:
        print(report.model_dump_json(indent=2))
    else:
        recurring = [f for f in report.findings if f.k > 1]
        said(
            f"study {report.study}: {report.n} samples of one passage; {len(report.findings)} findings, "
            f"{report.core} in the core (in at least half the samples), {len(recurring)} recurring, "
            f"{report.once} appeared once"
        )
        out.print(findings_table(report))
        if report.shares:
            out.print(shares_table(report))
        if report.overlaps:
            out.print(overlaps_table(report))
        if report.models:
            out.print(models_table(report))
            every = ", ".join(report.every_model) or "none"
            said(f"every model reaches: {every}")
        v = report.verdicts
        spent = report.spent
        said(
            f"judged: {v.compared} pairs: {v.match} match, {v.distinct} distinct, {v.undecided} undecided "
            f"(the verdict changed with the order, or its reason said nothing), {v.unjudged} unjudged; "
            + (
                f"spent {spent.calls} calls ({spent.cache_hits} from the cache), {spent.tokens:,} tokens, "
                f"${spent.cost_usd:.4f}"
                if spent is not None
                else "no judge call"
            )
        )
    if report.untraced:
        noted(
            f"dagmca: note: no claims aligned for {', '.join(report.untraced)}: a final answer not traced "
            "(`dagmca ledger SESSION` traces it)"
        )
    for note in report.notes:
        noted(f"dagmca: note: {note}")
