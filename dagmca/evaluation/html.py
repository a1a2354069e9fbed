"""`dagmca eval --report eval.html`: the report as one self-contained page (no script,
no file beside it, the plot inline as SVG), to attach to an issue or a paper: what was
run (task set, models, versions, settings), the tables with their intervals, the
readings and warnings, the claims' origins against their control, the judge's check,
and what it cost."""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape

from dagmca.evaluation.files import (
    above_control_lines,
    check_line,
    cited,
    controlled,
    ledger_rows,
    share_cells,
    splits,
)
from dagmca.evaluation.identity import models_line
from dagmca.evaluation.plot import quality_cost_svg
from dagmca.evaluation.report import EvalReport
from dagmca.graph import ClaimOrigin

STYLE = (
    "body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#111}"
    "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;text-align:left}"
    "th{background:#f3f4f6}.warn{color:#92400e}code{background:#f3f4f6;padding:0 3px}"
)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _table(head: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{cells}</tr>{body}</table>"


def _arms(report: EvalReport) -> str:
    rows = []
    for a in report.arms:
        acc = a.accuracy
        rows.append([
            a.arm, a.model.model if a.model else "-", a.sessions, _pct(acc.value if acc else None),
            f"[{_pct(acc.lo)}, {_pct(acc.hi)}]" if acc else "-",
            f"{a.mean_words:.0f}" if a.mean_words is not None else "-", cited(a), a.calls, a.tokens.total,
            f"{a.cost_usd:.4f}",
        ])  # fmt: skip
    head = [
        "arm", "model", "sessions", "accuracy", "95% CI", "mean words", "cited (95% CI); removed", "calls",
        "tokens", "cost $",
    ]  # fmt: skip
    return _table(head, rows)


def _ledger(report: EvalReport) -> list[str]:
    """The origins of the traced arms' claims, each arm's control under it, and each
    arm's emergent share above its control's."""
    rows = [
        [label.strip(), led.sessions, led.claims, *share_cells(led), led.untraced]
        for label, led in ledger_rows(report)
    ]
    if not rows:
        return []
    head = ["arm", "sessions", "claims", *ClaimOrigin, "untraced"]
    lines = [f"<p>{escape(line)}.</p>" for line in above_control_lines(report)]
    return ["<h2>Origins of the final answers' claims</h2>", _table(head, rows), *lines]


def _comparisons(report: EvalReport) -> list[str]:
    rows = []
    for c in report.comparisons:
        rows.append([
            c.arm, c.baseline, c.kind, c.tasks, f"{c.wins}/{c.losses}/{c.ties}", splits(c),
            f"{c.win_rate:.2f} [{c.lo:.2f}, {c.hi:.2f}]", controlled(c), f"{c.p_value:.3g}",
            f"{c.p_holm:.3g}", f"{c.mde:.2f}" if c.mde is not None else "-",
        ])  # fmt: skip
    head = [
        "arm", "baseline", "on", "tasks", "W/L/T", "order splits", "win rate (95% CI)", "length-controlled",
        "p", "p Holm", "MDE (80%)",
    ]  # fmt: skip
    read = [
        f"<p>{escape(f'{c.arm} vs {c.baseline} ({c.kind}): {c.reading}.')}</p>"
        for c in report.comparisons
        if c.reading
    ]
    return ["<h2>Paired comparisons by task</h2>", _table(head, rows), *read]


def html_report(report: EvalReport, settings: dict[str, object] | None = None) -> str:
    """The page of `report`; `settings`: the run's settings to show (as the Evaluation
    node keeps them)."""
    t = report.task_set
    what = f"{t.source} {t.name} ({t.tasks} tasks, sha256 {t.sha256[:12]}…)" if t else f"{report.tasks} tasks"
    title = escape(report.eval_id)
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>dagmca eval {title}</title>",
        f"<style>{STYLE}</style></head><body><h1>Evaluation {title}</h1>",
        f"<p>Task set: {escape(what)}; {report.repeats} repeat(s). dagmca {escape(report.dagmca_version)}, "
        f"prompts {escape(report.prompt_version)}, result layout {report.schema_version}.</p>",
        f"<p>Models: {escape(models_line(report.models))}.</p>",
        "<h2>Arms</h2>",
        _arms(report),
    ]
    svg = quality_cost_svg(report)
    if svg is not None:
        parts.append(svg)
    if report.comparisons:
        parts += _comparisons(report)
    parts += _ledger(report)
    for n in report.noise_floors:
        parts.append(
            f"<p>Noise floor: {escape(n.arm)} against itself over {n.pairs} pairs of repeats ({n.kind}): "
            f"win rate {n.win_rate:.2f} [{n.lo:.2f}, {n.hi:.2f}], p {n.p_value:.3g}, "
            f"p Holm {n.p_holm:.3g}.</p>"
        )
    if report.judge is not None:
        judge = f"Judge: {report.judge.model}, prompt {report.judge.prompt_version}. {check_line(report)}"
        parts.append(f"<p>{escape(judge)}</p>")
    parts += [f"<p class='warn'>Warning: {escape(n.message)}.</p>" for n in report.notices]
    if report.spend is not None:
        s = report.spend
        parts.append(
            f"<p>Spent: {s.total.calls:,} calls, {s.total.tokens:,} tokens, ${s.total.cost_usd:.4f} (arms "
            f"{s.arms.calls:,}, ledger {s.ledger.calls:,}, ledger's control {s.control.calls:,}, judge "
            f"{s.judge.calls:,} calls).</p>"
        )
    if settings:
        shown = json.dumps(settings, indent=2, sort_keys=True, default=str)
        parts.append(f"<h2>Settings</h2><pre>{escape(shown)}</pre>")
    parts.append("</body></html>\n")
    return "\n".join(parts)
