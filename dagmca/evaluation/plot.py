"""The quality-against-cost plot of an evaluation: each arm with an accuracy as a
point, x its cost (dollars, or calls when nothing was priced, as with a local model), y
its accuracy with the Wilson interval as a bar. As SVG, written by hand, always; as PNG
too when matplotlib (the `plot` extra) is installed, drawn headless (Agg) on a figure
of its own, so nothing global of matplotlib's is touched."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from pathlib import Path

from dagmca.evaluation.report import ArmRow, EvalReport

INK = "#0F766E"  # the Evaluation node's colour in the exports
NO_PLOT = (
    "no quality-cost plot: no arm has an accuracy (every task is open, judged in pairs); the judged "
    "win rates are in eval.md"
)
NO_PNG = "no PNG plot: matplotlib is not installed (pip install 'dagmca[plot]'); the SVG is written"


@dataclass(frozen=True)
class Points:
    arms: list[ArmRow]
    xs: list[float]
    label: str


def quality_cost(report: EvalReport) -> Points | None:
    """The plot's points; None when no arm has an accuracy (judged tasks only)."""
    arms = [a for a in report.arms if a.accuracy is not None]
    if not arms:
        return None
    priced = any(a.cost_usd > 0 for a in arms)
    xs = [a.cost_usd if priced else float(a.calls) for a in arms]
    return Points(arms, xs, "cost (USD)" if priced else "LLM calls")


def matched(report: EvalReport) -> str:
    """The plot's caption: how a self-consistency vote was sized against its target."""
    return f"votes matched to their target by {report.match}, task by task"


def quality_cost_svg(report: EvalReport, width: int = 640, height: int = 400) -> str | None:
    """Each arm with an accuracy as a point: x its cost (dollars, or calls when nothing
    was priced, as with a local model), y its accuracy with its interval as a bar, and
    the rule a vote was matched by. None when no arm has an accuracy (judged tasks only)."""
    points = quality_cost(report)
    if points is None:
        return None
    arms, xs, label = points.arms, points.xs, points.label
    left, right, top, bottom = 70, 30, 30, 50
    span = max(xs) or 1.0
    w, h = width - left - right, height - top - bottom

    def px(x: float) -> float:
        return left + w * x / (span * 1.1)

    def py(y: float) -> float:
        return top + h * (1 - y)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
        'font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<line x1="{left}" y1="{py(0)}" x2="{left + w}" y2="{py(0)}" stroke="black"/>',
        f'<line x1="{left}" y1="{py(0)}" x2="{left}" y2="{py(1)}" stroke="black"/>',
        f'<text x="{left + w / 2}" y="{height - 12}" text-anchor="middle">{label}</text>',
        f'<text x="{left}" y="18">{escape(matched(report))}</text>',
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


def quality_cost_png(report: EvalReport, path: Path) -> bool:
    """Writes the plot as PNG to `path`; False when there is nothing to plot. Raises
    ImportError when matplotlib is not installed."""
    points = quality_cost(report)
    if points is None:
        return False
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.0), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for a, x in zip(points.arms, points.xs, strict=True):
        acc = a.accuracy
        assert acc is not None
        below, above = max(0.0, acc.value - acc.lo), max(0.0, acc.hi - acc.value)
        ax.errorbar([x], [acc.value], yerr=[[below], [above]], fmt="o", color=INK, capsize=4)
        ax.annotate(a.arm, (x, acc.value), xytext=(6, 6), textcoords="offset points")
    ax.set_title(matched(report), fontsize=9, loc="left")
    ax.set_xlabel(points.label)
    ax.set_ylabel("accuracy (95% CI)")
    ax.set_ylim(-0.03, 1.05)  # a point at 0 stays in sight above the axis
    ax.set_xlim(0.0, (max(points.xs) or 1.0) * 1.15)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, format="png")
    return True
