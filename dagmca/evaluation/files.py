"""An evaluation's report folder: `eval.json` (the whole report, every session's
answer included), `eval.md` (the tables, for reading and for pasting), and the
quality-against-cost plot as `quality-cost.svg` and, with matplotlib, `quality-cost.png`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dagmca.evaluation.identity import models_line
from dagmca.evaluation.origins import ArmLedger
from dagmca.evaluation.plot import NO_PLOT, NO_PNG, quality_cost_png, quality_cost_svg
from dagmca.evaluation.report import ArmRow, Comparison, EvalReport
from dagmca.graph import ClaimOrigin


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def markdown(report: EvalReport) -> str:
    lines = [
        f"# Evaluation {report.eval_id}",
        "",
        f"{report.tasks} tasks, {len(report.arms)} arms, {report.repeats} repeat(s).",
        "",
        f"Models: {models_line(report.models)}.",
        "",
        "| arm | model | protocol | sessions | accuracy | 95% CI | parse failures | mean words "
        "| cited (95% CI); removed | calls | tokens | cost $ |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for a in report.arms:
        acc = a.accuracy
        ci = f"[{_pct(acc.lo)}, {_pct(acc.hi)}]" if acc else "-"
        lines.append(
            f"| {a.arm} | {a.model.model if a.model else '-'} | {a.protocol} | {a.sessions} "
            f"| {_pct(acc.value if acc else None)} | {ci} | {acc.parse_failures if acc else '-'} "
            f"| {_num(a.mean_words)} | {cited(a)} | {a.calls} | {a.tokens.total} | {a.cost_usd:.4f} |"
        )
    if report.comparisons:
        lines += [
            "",
            "Paired comparisons by task (win rate: wins plus half the ties, 95% CI bootstrapped over tasks; "
            "p: exact sign-flip test over the tasks' scores; Holm over all; unread pairs are never ties; "
            "order splits: judged pairs whose two orders disagreed, counted as ties; length-controlled: the "
            "win rate at equal length, AlpacaEval 2.0's regression):",
            "",
            "| arm | baseline | on | tasks | W/L/T | no verdict | unjudged | order splits | win rate "
            "| 95% CI | length-controlled (95% CI) | p | p Holm |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {c.arm} | {c.baseline} | {c.kind} | {c.tasks} | {c.wins}/{c.losses}/{c.ties} "
            f"| {c.no_verdict} | {c.unjudged} | {splits(c)} | {c.win_rate:.2f} "
            f"| [{c.lo:.2f}, {c.hi:.2f}] | {controlled(c)} | {c.p_value:.3g} | {c.p_holm:.3g} |"
            for c in report.comparisons
        ]
        lines += [
            "",
            *(f"{c.arm} vs {c.baseline} ({c.kind}): {c.reading}." for c in report.comparisons if c.reading),
        ]
    lines += _criteria(report) + _ledger(report) + _spend(report)
    lines += [
        "",
        *(
            f"Noise floor: {n.arm} against itself over {n.pairs} pairs of repeats ({n.kind}): win rate "
            f"{n.win_rate:.2f} [{n.lo:.2f}, {n.hi:.2f}], p {n.p_value:.3g}, p Holm {n.p_holm:.3g}. It is the "
            "same arm, so its p Holm under 0.05 is a false positive of this eval's making: then trust no "
            "comparison of it."
            for n in report.noise_floors
        ),
    ]
    if report.judge is not None:
        j = report.judge
        lines += ["", f"Judge: {j.model or 'the debaters model'}, {j.orders} orders, {j.trials} trial(s), "
                  f"prompt {j.prompt_version}. {check_line(report)}"]  # fmt: skip
    lines += [f"\nWarning: {n.message}." for n in report.notices]
    return "\n".join(lines) + "\n"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def splits(c: Comparison) -> str:
    """A judged row's order splits (`-` on accuracy)."""
    if c.order_splits is None:
        return "-"
    rate = f" ({c.order_split_rate:.0%})" if c.order_split_rate is not None else ""
    return f"{c.order_splits}{rate}"


def controlled(c: Comparison) -> str:
    """A judged row's length-controlled win rate with its interval (`-` on accuracy)."""
    if c.lc_win_rate is None or c.lc_lo is None or c.lc_hi is None:
        return "-"
    return f"{c.lc_win_rate:.2f} [{c.lc_lo:.2f}, {c.lc_hi:.2f}]"


def check_line(report: EvalReport) -> str:
    """The judge's latest `dagmca judge-check`, in one line, or that it was never checked."""
    j = report.judge
    if j is None:
        return ""
    if j.check is None:
        return "judge not checked: `dagmca judge-check`"
    said = ", ".join(
        f"{c.name.value} {c.rate:.2f} [{c.lo:.2f}, {c.hi:.2f}] {c.status.value}"
        if c.rate is not None and c.lo is not None and c.hi is not None
        else f"{c.name.value} {c.status.value}"
        for c in j.check.checks
    )
    return f"judge check of {j.check.checked_at[:10]} ({j.check.status.value}): {said}"


def _criteria(report: EvalReport) -> list[str]:
    if not report.criteria:
        return []
    lines = [
        "",
        "By criterion (the overall rows' pairs; 95% CI bootstrapped over tasks; p: sign-flip test over "
        "tasks; Holm over every criterion row):",
        "",
        "| arm | baseline | criterion | W/L/T | no verdict | unjudged | win rate | 95% CI | p | p Holm |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    return lines + [
        f"| {c.arm} | {c.baseline} | {c.criterion} | {c.wins}/{c.losses}/{c.ties} | {c.no_verdict} "
        f"| {c.unjudged} | {c.win_rate:.2f} "
        f"| [{c.lo:.2f}, {c.hi:.2f}] | {c.p_value:.3g} | {c.p_holm:.3g} |"
        for c in report.criteria
    ]


def cited(a: ArmRow) -> str:
    """An arm's cited share with its interval, and the citations removed (`-`: no final)."""
    c = a.citations
    if c is None:
        return "-"
    return f"{_pct(c.cited.value)} [{_pct(c.cited.lo)}, {_pct(c.cited.hi)}]; {c.removed}"


def share_cells(led: ArmLedger) -> list[str]:
    """Each origin's share with its interval, in ClaimOrigin's order (`-`: a report
    written before the ledger told that origin apart)."""
    return [
        f"{_pct(s.value)} [{_pct(s.lo)}, {_pct(s.hi)}]" if s is not None else "-" for _, s in led.by_origin()
    ]


def ledger_rows(report: EvalReport) -> list[tuple[str, ArmLedger]]:
    """The ledger's table, row by row: each traced arm, and under it its control."""
    rows: list[tuple[str, ArmLedger]] = []
    for a in report.arms:
        if a.ledger is not None:
            rows.append((a.arm, a.ledger))
        if a.control is not None:
            rows.append((f"  control of {a.arm}", a.control))
    return rows


def above_control_lines(report: EvalReport) -> list[str]:
    """Each traced arm's emergent share above its control's, in a line, or that it has
    no control to be read against."""
    lines = []
    for a in report.arms:
        d, led, control = a.emergent_above_control, a.ledger, a.control
        if d is not None and led is not None and control is not None:
            few = ", few tasks: the wider of the bootstrap and Newcombe's interval" if d.few_tasks else ""
            lines.append(
                f"{a.arm}: emergent {_pct(led.emergent.value)}, its control's "
                f"{_pct(control.emergent.value)}: "
                f"{100 * d.value:+.1f} points above the control [{100 * d.lo:+.1f}, {100 * d.hi:+.1f}] over "
                f"{d.tasks} tasks (95% CI{few}); only a share above the control's is the debate's"
            )
        elif led is not None and control is None:
            lines.append(f"{a.arm}: no control: its shares have nothing to be read against")
    return lines


def _ledger(report: EvalReport) -> list[str]:
    rows = ledger_rows(report)
    if not rows:
        return []
    lines = [
        "",
        "Origins of the final answers' claims (emergence ledger; 95% CI). Under each arm, its control: "
        "the single arm's answers traced against that arm's sources, which the lone agent never read:",
        "",
        "| arm | sessions | claims | " + " | ".join(ClaimOrigin) + " | untraced |",
        "|---|---|---|" + "---|" * len(ClaimOrigin) + "---|",
    ]
    for label, led in rows:
        cells = " | ".join(share_cells(led))
        lines.append(f"| {label.strip()} | {led.sessions} | {led.claims} | {cells} | {led.untraced} |")
    return [*lines, "", *above_control_lines(report)]


def _spend(report: EvalReport) -> list[str]:
    s = report.spend
    if s is None:
        return []
    rows = [
        ("arms", s.arms), ("ledger", s.ledger), ("ledger's control", s.control), ("judge", s.judge),
        ("total", s.total),
    ]  # fmt: skip
    lines = ["", "Spend (requests made; what the budgets cap):", "", "| part | calls | tokens | cost $ |"]
    lines.append("|---|---|---|---|")
    return lines + [f"| {name} | {c.calls} | {c.tokens} | {c.cost_usd:.4f} |" for name, c in rows]


@dataclass
class Written:
    """The report's files, and a line for each one left out (the PNG, without matplotlib)."""

    paths: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def write_report(report: EvalReport, folder: Path) -> Written:
    folder.mkdir(parents=True, exist_ok=True)
    as_json, as_md = folder / "eval.json", folder / "eval.md"
    as_json.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    as_md.write_text(markdown(report), encoding="utf-8")
    written = Written([as_json, as_md])
    plot = quality_cost_svg(report)
    if plot is None:
        written.notes.append(NO_PLOT)
        return written
    svg, png = folder / "quality-cost.svg", folder / "quality-cost.png"
    svg.write_text(plot, encoding="utf-8")
    written.paths.append(svg)
    try:
        if quality_cost_png(report, png):
            written.paths.append(png)
    except ImportError:
        written.notes.append(NO_PNG)
    return written
