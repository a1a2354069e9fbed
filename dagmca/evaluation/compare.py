"""Result files side by side: `dagmca eval --compare A.json B.json ...` lines up evals of
one task set (a suite or a task file, told apart by the hash of their tasks) run on other
models, settings or machines, in one table of each arm's accuracy and cost with their
intervals, and one quality-against-cost plot. Judged results are lined up only where
the judge and its prompt version are the same in every file. Files of another task set,
or of a layout before the task set was recorded, are refused in one line."""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from pathlib import Path

from pydantic import Field, ValidationError

from dagmca.errors import UserError
from dagmca.evaluation.plot import INK
from dagmca.evaluation.report import EvalReport
from dagmca.graph.schema import Strict


class ComparedArm(Strict):
    """One arm of one result file: where it ran (the file's label: its models), its
    accuracy with its interval, its cost, and its judged win rate where comparable."""

    source: str
    label: str
    arm: str
    model: str
    accuracy: float | None
    lo: float | None
    hi: float | None
    tasks: int
    cost_usd: float
    calls: int
    cost_per_session: float | None


class ComparedPair(Strict):
    """One judged comparison of one result file: its win rate with its interval."""

    source: str
    arm: str
    baseline: str
    win_rate: float
    lo: float
    hi: float
    p_holm: float


class Compared(Strict):
    task_set: str  # the suite's or file's name and the hash's first characters
    tasks: int
    rows: list[ComparedArm]
    judged: bool  # the files share a judge and its prompt version: judged rows are comparable
    pairs: list[ComparedPair] = Field(default_factory=list)  # judged rows, when comparable
    notes: list[str]


def read_result(path: Path) -> EvalReport:
    """A result file (`eval --json`'s output or `eval.json`), one line on what is wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(
            f"{path}: not a result file ({exc})", "give eval --json's output or an eval.json"
        ) from None
    if not isinstance(data, dict) or data.get("schema_version", 1) < 2:
        raise UserError(
            f"{path}: a result file of an earlier layout names no task set",
            "run the eval again to rewrite it",
        )
    data.setdefault("results", [])
    try:
        return EvalReport.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UserError(f"{path}: {'.'.join(map(str, first['loc']))}: {first['msg']}") from None


def _label(report: EvalReport) -> str:
    debaters = {m.model for m in report.models if m.role == "debate"}
    return ", ".join(sorted(debaters)) or "-"


def compare_results(paths: Sequence[Path]) -> Compared:
    """The files' arms in one table; files of two task sets refused."""
    if len(paths) < 2:
        raise UserError(
            "--compare needs two result files or more", "e.g. dagmca eval --compare a.json b.json"
        )
    reports = [(p, read_result(p)) for p in paths]
    sets = {r.task_set.sha256 if r.task_set else "" for _, r in reports}
    if len(sets) > 1 or "" in sets:
        said = "; ".join(f"{p.name}: {_set_name(r)}" for p, r in reports)
        raise UserError(
            f"the results are of different task sets ({said})", "compare results of one suite or task file"
        )
    judges = {(r.judge.model, r.judge.prompt_version) if r.judge else None for _, r in reports}
    judged = len(judges) == 1 and None not in judges
    notes = (
        []
        if judged or judges == {None}
        else ["judged results left out: the files' judges or their prompts differ"]
    )
    rows = []
    for path, report in reports:
        for a in report.arms:
            acc = a.accuracy
            model = a.model.model if a.model else "-"
            per_session = a.cost_per_session.value if a.cost_per_session else None
            rows.append(
                ComparedArm(
                    source=path.name, label=_label(report), arm=a.arm, model=model,
                    accuracy=acc.value if acc else None, lo=acc.lo if acc else None,
                    hi=acc.hi if acc else None, tasks=a.tasks, cost_usd=a.cost_usd, calls=a.calls,
                    cost_per_session=per_session,
                )
            )  # fmt: skip
    pairs = [
        ComparedPair(
            source=path.name,
            arm=c.arm,
            baseline=c.baseline,
            win_rate=c.win_rate,
            lo=c.lo,
            hi=c.hi,
            p_holm=c.p_holm,
        )
        for path, report in reports
        for c in report.comparisons
        if judged and c.kind == "judged"
    ]
    first = reports[0][1]
    return Compared(
        task_set=_set_name(first), tasks=first.tasks, rows=rows, judged=judged, pairs=pairs, notes=notes
    )


def _set_name(report: EvalReport) -> str:
    t = report.task_set
    return f"{t.name or t.source} ({t.sha256[:10]})" if t else "no task set recorded"


def compared_svg(found: Compared, width: int = 640, height: int = 400) -> str:
    """Accuracy (with its interval) against cost for every arm of every file."""
    points = [r for r in found.rows if r.accuracy is not None]
    priced = any(r.cost_usd > 0 for r in points)
    xs = [r.cost_usd if priced else float(r.calls) for r in points]
    left, right, top, bottom = 70, 30, 30, 50
    axis = "cost (USD)" if priced else "LLM calls"
    span = max(xs, default=0.0) or 1.0
    w, h = width - left - right, height - top - bottom
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
        'font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<line x1="{left}" y1="{top + h}" x2="{left + w}" y2="{top + h}" stroke="black"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + h}" stroke="black"/>',
        f'<text x="{left + w / 2}" y="{height - 12}" text-anchor="middle">{axis}</text>',
        f'<text x="{left}" y="18">{escape(found.task_set)}: accuracy (95% CI) against cost</text>',
    ]
    for r, x in zip(points, xs, strict=True):
        assert r.accuracy is not None and r.lo is not None and r.hi is not None
        cx = left + w * x / (span * 1.1)
        low, high, at = top + h * (1 - r.lo), top + h * (1 - r.hi), top + h * (1 - r.accuracy)
        parts += [
            f'<line x1="{cx}" y1="{low}" x2="{cx}" y2="{high}" stroke="{INK}"/>',
            f'<circle cx="{cx}" cy="{at}" r="4" fill="{INK}"/>',
            f'<text x="{cx + 6}" y="{at - 6}">{escape(f"{r.arm} ({r.label})")}</text>',
        ]
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
