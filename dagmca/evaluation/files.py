"""An evaluation's report folder: `eval.json` (the whole report, every session's
answer included), `eval.md` (the tables, for reading and for pasting) and
`quality-cost.svg` (accuracy against cost per arm, with intervals). The plot is SVG
written by hand: a plotting library would be a dependency for one chart."""

from __future__ import annotations

from html import escape
from pathlib import Path

from dagmca.evaluation.report import EvalReport

INK = "#0F766E"  # the Evaluation node's colour in the exports


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def markdown(report: EvalReport) -> str:
    lines = [
        f"# Evaluation {report.eval_id}",
        "",
        f"{report.tasks} tasks, {len(report.arms)} arms, {report.repeats} repeat(s).",
        "",
        "| arm | protocol | sessions | accuracy | 95% CI | parse failures | calls | tokens | cost $ |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for a in report.arms:
        acc = a.accuracy
        ci = f"[{_pct(acc.lo)}, {_pct(acc.hi)}]" if acc else "-"
        lines.append(
            f"| {a.arm} | {a.protocol} | {a.sessions} | {_pct(acc.value if acc else None)} | {ci} "
            f"| {acc.parse_failures if acc else '-'} | {a.calls} | {a.tokens} | {a.cost_usd:.4f} |"
        )
    if report.comparisons:
        lines += [
            "",
            "Paired comparisons (win rate: wins plus half the ties; p: exact sign test; Holm over all):",
            "",
            "| arm | baseline | on | W/L/T | win rate | 95% CI | p | p Holm |",
            "|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {c.arm} | {c.baseline} | {c.kind} | {c.wins}/{c.losses}/{c.ties} | {c.win_rate:.2f} "
            f"| [{c.lo:.2f}, {c.hi:.2f}] | {c.p_value:.3g} | {c.p_holm:.3g} |"
            for c in report.comparisons
        ]
    if report.noise_floor is not None:
        n = report.noise_floor
        lines += [
            "",
            f"Noise floor: {n.arm} against its own repeat ({n.kind}): win rate {n.win_rate:.2f} "
            f"[{n.lo:.2f}, {n.hi:.2f}]; a difference inside this interval is not one.",
        ]
    if report.judge is not None:
        j = report.judge
        lines += ["", f"Judge: {j.model or 'the debaters model'}, {j.orders} orders, {j.trials} trial(s), "
                  f"prompt {j.prompt_version}."]  # fmt: skip
    return "\n".join(lines) + "\n"


def quality_cost_svg(report: EvalReport, width: int = 640, height: int = 400) -> str | None:
    """Each arm with an accuracy as a point: x its cost (dollars, or calls when nothing
    was priced, as with a local model), y its accuracy with the Wilson interval as a
    bar. None when no arm has an accuracy (judged tasks only)."""
    arms = [a for a in report.arms if a.accuracy is not None]
    if not arms:
        return None
    priced = any(a.cost_usd > 0 for a in arms)
    xs = [a.cost_usd if priced else float(a.calls) for a in arms]
    left, right, top, bottom = 70, 30, 30, 50
    span = max(xs) or 1.0
    w, h = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + w * x / (span * 1.1)

    def py(y: float) -> float:
        return top + h * (1 - y)

    label = "cost (USD)" if priced else "LLM calls"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
        'font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<line x1="{left}" y1="{py(0)}" x2="{left + w}" y2="{py(0)}" stroke="black"/>',
        f'<line x1="{left}" y1="{py(0)}" x2="{left}" y2="{py(1)}" stroke="black"/>',
        f'<text x="{left + w / 2}" y="{height - 12}" text-anchor="middle">{label}</text>',
        f'<text x="16" y="{top + h / 2}" transform="rotate(-90 16 {top + h / 2})" text-anchor="middle">'
        "accuracy (95% CI)</text>",
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<text x="{left - 8}" y="{py(tick) + 4}" text-anchor="end">{tick:.2f}</text>')
    for a, x in zip(arms, xs, strict=True):
        acc = a.accuracy
        assert acc is not None
        cx = px(x)
        parts += [
            f'<line x1="{cx}" y1="{py(acc.lo)}" x2="{cx}" y2="{py(acc.hi)}" stroke="{INK}" stroke-width="2"'
            "/>",
            f'<circle cx="{cx}" cy="{py(acc.value)}" r="5" fill="{INK}"/>',
            f'<text x="{cx + 8}" y="{py(acc.value) - 8}">{escape(a.arm)}</text>',
        ]
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def write_report(report: EvalReport, folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    as_json, as_md = folder / "eval.json", folder / "eval.md"
    as_json.write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    as_md.write_text(markdown(report), encoding="utf-8")
    written = [as_json, as_md]
    plot = quality_cost_svg(report)
    if plot is not None:
        written.append(folder / "quality-cost.svg")
        written[-1].write_text(plot, encoding="utf-8")
    return written
