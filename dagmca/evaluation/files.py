"""An evaluation's report folder: `eval.json` (the whole report, every session's
answer included), `eval.md` (the tables, for reading and for pasting), and the
quality-against-cost plot as `quality-cost.svg` and, with matplotlib, `quality-cost.png`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dagmca.evaluation.identity import models_line
from dagmca.evaluation.plot import NO_PNG, quality_cost_png, quality_cost_svg
from dagmca.evaluation.report import EvalReport


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
        "| arm | protocol | sessions | accuracy | 95% CI | parse failures | calls | tokens | cost $ |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for a in report.arms:
        acc = a.accuracy
        ci = f"[{_pct(acc.lo)}, {_pct(acc.hi)}]" if acc else "-"
        lines.append(
            f"| {a.arm} | {a.protocol} | {a.sessions} | {_pct(acc.value if acc else None)} | {ci} "
            f"| {acc.parse_failures if acc else '-'} | {a.calls} | {a.tokens.total} | {a.cost_usd:.4f} |"
        )
    if report.comparisons:
        lines += [
            "",
            "Paired comparisons by task (win rate: wins plus half the ties, 95% CI bootstrapped over tasks; "
            "p: exact sign-flip test over the tasks' scores; Holm over all; unread pairs are never ties):",
            "",
            "| arm | baseline | on | tasks | W/L/T | no verdict | unjudged | win rate | 95% CI | p "
            "| p Holm |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {c.arm} | {c.baseline} | {c.kind} | {c.tasks} | {c.wins}/{c.losses}/{c.ties} "
            f"| {c.no_verdict} | {c.unjudged} | {c.win_rate:.2f} "
            f"| [{c.lo:.2f}, {c.hi:.2f}] | {c.p_value:.3g} | {c.p_holm:.3g} |"
            for c in report.comparisons
        ]
    lines += _criteria(report) + _ledger(report) + _spend(report)
    if report.noise_floor is not None:
        n = report.noise_floor
        lines += [
            "",
            f"Noise floor: {n.arm} against itself over {n.pairs} pairs of repeats ({n.kind}): win rate "
            f"{n.win_rate:.2f} [{n.lo:.2f}, {n.hi:.2f}], p {n.p_value:.3g}. It is the same arm, so its p "
            "under 0.05 is a false positive of this eval's making: then trust no comparison of it.",
        ]
    if report.judge is not None:
        j = report.judge
        lines += ["", f"Judge: {j.model or 'the debaters model'}, {j.orders} orders, {j.trials} trial(s), "
                  f"prompt {j.prompt_version}."]  # fmt: skip
    return "\n".join(lines) + "\n"


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


def _ledger(report: EvalReport) -> list[str]:
    traced = [a for a in report.arms if a.ledger is not None]
    if not traced:
        return []
    lines = [
        "",
        "Origins of the final answers' claims (emergence ledger; 95% CI):",
        "",
        "| arm | sessions | claims | passage | single | recombined | emergent | inferred | unsupported "
        "| untraced |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for a in traced:
        led = a.ledger
        assert led is not None
        cells = [
            f"{_pct(s.value)} [{_pct(s.lo)}, {_pct(s.hi)}]" if s is not None else "-"
            for s in (led.passage, led.single, led.recombined, led.emergent, led.inferred, led.unsupported)
        ]
        lines.append(f"| {a.arm} | {led.sessions} | {led.claims} | {' | '.join(cells)} | {led.untraced} |")
    return lines


def _spend(report: EvalReport) -> list[str]:
    s = report.spend
    if s is None:
        return []
    rows = [("arms", s.arms), ("ledger", s.ledger), ("judge", s.judge), ("total", s.total)]
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
