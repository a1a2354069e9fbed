"""How `dagmca eval` shows what it found and what it would spend: the tables of arms,
comparisons, criteria and claim origins, the noise floors, the judge's latest check,
the warnings to read them by, and the dry run's projection."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dagmca.cli.console import noted, out, said
from dagmca.cli.tables import Table
from dagmca.errors import BuildInterrupted
from dagmca.evaluation.breakdown import PairedComparison
from dagmca.evaluation.estimate import EvalProjection
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
from dagmca.evaluation.plan import EvalPlan
from dagmca.evaluation.power import PowerRow
from dagmca.evaluation.report import ArmRow, EvalReport, RunRecord
from dagmca.graph import ClaimOrigin


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def arms_table(report: EvalReport) -> Table:
    table = Table(title=f"dagmca eval {report.eval_id}", title_justify="left")
    for name in (
        "arm", "sessions", "accuracy (95% CI)", "parse fail", "mean words", "cited (95% CI); removed",
        "calls", "tokens (prompt + completion)", "cost $", "accuracy per $ of a session",
    ):  # fmt: skip
        table.add_column(name, overflow="fold")
    for a in report.arms:
        acc = a.accuracy
        cell = f"{_pct(acc.value)} [{_pct(acc.lo)}, {_pct(acc.hi)}]" if acc else "-"
        table.add_row(
            a.arm, str(a.sessions), cell,
            str(acc.parse_failures) if acc else "-",
            f"{a.mean_words:.0f}" if a.mean_words is not None else "-", cited(a),
            f"{a.calls:,}", f"{a.tokens.prompt:,} + {a.tokens.completion:,}", f"{a.cost_usd:.4f}",
            f"{a.accuracy_per_usd:.3g}" if a.accuracy_per_usd is not None else "-",
        )  # fmt: skip
    return table


def arm_model(a: ArmRow) -> str:
    """An arm's model as the arms line names it: the model its debaters answered with,
    its protocol and the temperature they answered at."""
    if a.model is None:
        return "-"
    return f"{a.model.model or 'the default model'} ({a.protocol}, temperature {a.model.temperature:g})"


def _unread(c: PairedComparison) -> str:
    return f"{c.no_verdict} no verdict, {c.unjudged} unjudged" if c.no_verdict or c.unjudged else "-"


def comparisons_table(report: EvalReport) -> Table:
    table = Table(
        title="paired comparisons by task (win rate: wins + ties/2, 95% CI over tasks; sign-flip p over "
        "tasks, Holm-corrected; order splits count as ties; length-controlled: the win rate at equal length)",
        title_justify="left",
        keys=3,
    )
    for name in (
        "arm", "baseline", "on", "tasks", "W/L/T", "unread", "order splits", "win rate (95% CI)",
        "length-controlled (95% CI)", "p", "p Holm",
    ):  # fmt: skip
        table.add_column(name, overflow="fold")
    for c in report.comparisons:
        table.add_row(
            c.arm, c.baseline, c.kind, str(c.tasks), f"{c.wins}/{c.losses}/{c.ties}", _unread(c), splits(c),
            f"{c.win_rate:.2f} [{c.lo:.2f}, {c.hi:.2f}]", controlled(c), f"{c.p_value:.3g}",
            f"{c.p_holm:.3g}",
        )  # fmt: skip
    return table


def criteria_table(report: EvalReport) -> Table:
    table = Table(
        title="by criterion (same pairs as overall; 95% CI over tasks; Holm over every criterion row)",
        title_justify="left",
        keys=3,
    )
    for name in ("arm", "baseline", "criterion", "W/L/T", "unread", "win rate (95% CI)", "p", "p Holm"):
        table.add_column(name, overflow="fold")
    for c in report.criteria:
        table.add_row(
            c.arm, c.baseline, c.criterion, f"{c.wins}/{c.losses}/{c.ties}", _unread(c),
            f"{c.win_rate:.2f} [{c.lo:.2f}, {c.hi:.2f}]", f"{c.p_value:.3g}", f"{c.p_holm:.3g}",
        )  # fmt: skip
    return table


def ledger_table(report: EvalReport) -> Table:
    table = Table(
        title="origins of the final answers' claims (95% CI); under each arm its control: the single arm's "
        "answers traced against that arm's sources, which the lone agent never read",
        title_justify="left",
    )
    for name in ("arm", "sessions", "claims", *ClaimOrigin, "untraced"):
        table.add_column(name, overflow="fold")
    for label, led in ledger_rows(report):
        table.add_row(label, str(led.sessions), str(led.claims), *share_cells(led), str(led.untraced))
    return table


def show_projection(p: EvalProjection, as_json: bool) -> None:
    if as_json:
        print(p.model_dump_json(indent=2))
        return
    table = Table(title="dagmca eval --dry-run: projected", title_justify="left")
    for name in ("arm", "sessions", "calls", "cost $"):
        table.add_column(name)
    for a in p.arms:
        cost = f"{a.cost_usd_min:.4f}-{a.cost_usd_max:.4f}"
        table.add_row(a.arm, str(a.sessions), f"{a.calls_min:,}-{a.calls_max:,}", cost)
    for c in p.controls:
        cost = f"{c.cost_usd_min:.4f}-{c.cost_usd_max:.4f}"
        table.add_row(f"control of {c.arm}", str(c.sessions), f"{c.calls_min:,}-{c.calls_max:,}", cost)
    table.add_row("judge", "", f"{p.judge_calls:,}", "-")
    cost = f"{p.cost_usd_min:.4f}-{p.cost_usd_max:.4f}"
    table.add_row("total", "", f"{p.calls_min:,}-{p.calls_max:,}", cost)
    out.print(table)
    for t in p.time:
        said(f"time on the {t.where}: {_duration(t.seconds_min)} to {_duration(t.seconds_max)} ({t.basis})")
    for note in p.notes:
        said(note)
    for line in power_lines(p.power):
        said(line)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def power_lines(rows: list[PowerRow]) -> list[str]:
    """What each kind of comparison can find, in a line each, and what it rests on."""
    lines = []
    for r in rows:
        unit = "accuracy" if r.kind == "accuracy" else "win rate from 0.5"
        found = (
            f"the smallest difference it finds 80% of the time is {r.mde:.2f} in {unit}"
            if r.mde is not None
            else "no difference can reach p < 0.05 after Holm at this size"
        )
        need = (
            f"{r.tasks_needed:,} tasks" if r.tasks_needed is not None else "more tasks than can be simulated"
        )
        size = f"{r.tasks} tasks x {r.repeats} repeats, Holm over {r.comparisons} comparisons"
        lines.append(
            f"power ({r.kind}, {size}): {found}; a difference of {r.effect:.2f} needs {need} ({r.basis})"
        )
    return lines


def show_report(report: EvalReport) -> None:
    """The report on the terminal: models, tables, spend, noise floors, the judge's
    check; warnings and caveats on stderr."""
    said(f"models: {models_line(report.models)}")
    said("arms: " + "; ".join(f"{a.arm} {arm_model(a)}" for a in report.arms))
    out.print(arms_table(report))
    if report.comparisons:
        out.print(comparisons_table(report))
        for c in report.comparisons:
            if c.reading is not None:
                said(f"{c.arm} vs {c.baseline} ({c.kind}): {c.reading}")
    if report.criteria:
        out.print(criteria_table(report))
    if any(a.ledger is not None for a in report.arms):
        out.print(ledger_table(report))
        for line in above_control_lines(report):
            said(line)
    if report.spend is not None:
        s = report.spend
        out.print(
            f"spent: {s.total.calls:,} calls, {s.total.tokens:,} tokens, ${s.total.cost_usd:.4f} "
            f"(arms {s.arms.calls:,}, ledger {s.ledger.calls:,}, ledger's control {s.control.calls:,}, "
            f"judge {s.judge.calls:,} calls)"
        )
    for n in report.noise_floors:
        said(
            f"noise floor ({n.arm} against itself over {n.pairs} pairs of repeats, {n.kind}): win rate "
            f"{n.win_rate:.2f} [{n.lo:.2f}, {n.hi:.2f}], p {n.p_value:.3g}, p Holm {n.p_holm:.3g}"
            + (" — significant: this eval finds differences that are not there" if n.p_holm < 0.05 else "")
        )
    if report.judge is not None:
        said(check_line(report))
    for notice in report.notices:
        noted(f"dagmca: warning: {notice.message}")
    if any(a.accuracy is not None and a.accuracy.few_tasks for a in report.arms) or any(
        c.few_tasks for c in report.comparisons
    ):
        noted(
            "dagmca: fewer than 10 tasks: intervals are the wider of the bootstrap and Wilson over tasks, "
            "and rest on few tasks"
        )


def show_suites() -> None:
    """`--list-suites`: each suite, its size and what it tests."""
    from dagmca.evaluation.suites import listing

    table = Table(
        title="dagmca eval --suite NAME[:N] (files in examples/eval/, seed 0)", title_justify="left"
    )
    for name in ("suite", "tasks", "what it tests"):
        table.add_column(name, overflow="fold")
    for name, size, about in listing():
        table.add_row(name, str(size), about)
    out.print(table)


def show_compared(paths: list[Path], out_dir: Path | None, as_json: bool) -> None:
    """`--compare`: result files of one task set in one table (and one plot in `out_dir`)."""
    from dagmca.evaluation.compare import compare_results, compared_svg

    found = compare_results(paths)
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "compare.svg").write_text(compared_svg(found), encoding="utf-8")
        noted(f"wrote {out_dir / 'compare.svg'}")
    if as_json:
        print(found.model_dump_json(indent=2))
        return
    table = Table(title=f"dagmca eval --compare: {found.task_set}, {found.tasks} tasks", title_justify="left")
    for name in ("file", "models", "arm", "accuracy (95% CI)", "calls", "cost $", "cost of a session $"):
        table.add_column(name, overflow="fold")
    for r in found.rows:
        acc = f"{_pct(r.accuracy)} [{_pct(r.lo)}, {_pct(r.hi)}]" if r.accuracy is not None else "-"
        per = f"{r.cost_per_session:.4f}" if r.cost_per_session is not None else "-"
        table.add_row(r.source, r.label, r.arm, acc, f"{r.calls:,}", f"{r.cost_usd:.4f}", per)
    out.print(table)
    for p in found.pairs:
        rate = f"{p.win_rate:.2f} [{p.lo:.2f}, {p.hi:.2f}]"
        said(f"{p.source}: {p.arm} vs {p.baseline} (judged): {rate}, p Holm {p.p_holm:.3g}")
    for note in found.notes:
        noted(f"dagmca: {note}")


def run_with_progress(
    run: Callable[[Callable[[RunRecord], None]], EvalReport], plan: EvalPlan, as_json: bool
) -> EvalReport:
    """The eval run with a line per session as it ends (one read back from an earlier run
    says so, and does not count toward the ETA); Ctrl-C keeps what finished."""
    total = len(plan.tasks) * len(plan.arms) * plan.repeats
    seen: list[RunRecord] = []
    started = time.monotonic()

    def progress(record: RunRecord) -> None:
        seen.append(record)
        if as_json:
            return
        calls, cost = sum(r.calls for r in seen), sum(r.cost_usd for r in seen)
        ran = [r for r in seen if not r.reused]
        left = (time.monotonic() - started) / len(ran) * (total - len(seen)) if ran else 0.0
        state = "read back from an earlier run" if record.reused else record.status
        where = f"[{len(seen)}/{total}] {record.arm} {record.task} r{record.repeat}"
        noted(
            f"{where}: {state}, answer {record.answer!r} ({calls:,} calls, ${cost:.4f} so far; "
            f"ETA {left:.0f}s)"
        )

    try:
        return run(progress)
    except KeyboardInterrupt:
        raise BuildInterrupted(
            f"eval {plan.eval_id} interrupted: every finished session and verdict is kept",
            "run the same command again to finish it without repeating finished work",
        ) from None


def written(report: EvalReport, out_dir: Path | None, html: Path | None, settings: dict[str, Any]) -> None:
    """The report's files (`--out`, `--report`), and a line for each thing left out or
    not done: sessions a budget skipped, pairs not judged."""
    from dagmca.evaluation.files import write_report
    from dagmca.evaluation.html import html_report

    if out_dir is not None:
        files = write_report(report, out_dir)
        for path in files.paths:
            noted(f"wrote {path}")
        for note in files.notes:
            noted(f"dagmca: {note}")
    if html is not None:
        html.parent.mkdir(parents=True, exist_ok=True)
        html.write_text(html_report(report, settings), encoding="utf-8")
        noted(f"wrote {html}")
    if report.skipped:
        noted(
            f"dagmca: {report.skipped} sessions or ledger controls not run: the eval's budget is spent; "
            "rerun with a raised budget (--max-cost-usd, --max-llm-calls, --max-tokens, --budget-usd) to "
            "finish them"
        )
    if report.unjudged or report.no_verdict:
        noted(
            f"dagmca: {report.unjudged} judged pairs unjudged (the judge did not answer, or the budget is "
            f"spent) and {report.no_verdict} without a verdict (its reply could not be read, or said "
            "nothing): left out of every comparison, never counted as ties; rerun with a working judge to "
            "finish them"
        )
