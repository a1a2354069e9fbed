"""`dagmca eval`'s tables at 80 columns: every word of every cell whole (a number is never
broken across lines), no line wider than the terminal, and a table too wide to fit shown
in parts that repeat the columns naming a row."""

from __future__ import annotations

import io
from pathlib import Path

from rich.cells import cell_len
from rich.console import Console

from dagmca.cli.eval_report import arms_table, comparisons_table, criteria_table
from dagmca.cli.tables import Table
from dagmca.evaluation import Task
from dagmca.evaluation.judging import CRITERIA
from dagmca.llm.fake import ScriptedCall
from tests.support.evals import longer_wins, run, scripted

WIDTH = 80


def shown(table: Table) -> list[str]:
    console = Console(width=WIDTH, file=io.StringIO(), color_system=None, legacy_windows=False)
    console.print(table)
    text = console.file.getvalue()  # type: ignore[attr-defined]
    return [line.rstrip() for line in text.splitlines()]


def test_every_word_of_every_cell_stays_whole_at_80_columns(tmp_path: Path) -> None:
    found = [Task(id=f"t{i}", question=f"What is {i} + {i}?", answer=str(2 * i)) for i in range(1, 3)]

    def answers(arm: str, task: str, repeat: int) -> str:
        return str(2 * int(task[1:])) if arm != "single" else "no idea at all"

    def judged(call: ScriptedCall) -> object:  # the longer answer, on every criterion too
        overall = longer_wins(call)
        assert isinstance(overall, dict)
        said = [{"criterion": c, "reasoning": "says more", "verdict": overall["verdict"]} for c in CRITERIA]
        return {"criteria": said, **overall}

    report, _ = run(tmp_path, scripted(answers, judged), found, "single,mca", judge_all=True)
    assert report.comparisons and report.criteria
    for table in (arms_table(report), comparisons_table(report), criteria_table(report)):
        lines = shown(table)
        assert max(cell_len(line) for line in lines) <= WIDTH
        words = {w for column in table.columns for cell in column.cells for w in str(cell).split()}
        assert words, "the table has cells"
        broken = sorted(w for w in words if not any(w in line for line in lines))
        assert broken == [], "\n".join(lines)


def test_a_table_too_wide_for_the_terminal_is_shown_in_parts_that_repeat_its_keys() -> None:
    table = Table(title="wide", keys=2)
    for name in ("arm", "baseline", *(f"measure {i} (95% CI)" for i in range(8))):
        table.add_column(name)
    table.add_row("mca", "single", *(f"0.{i}5 [0.{i}1, 0.{i}9]" for i in range(8)))
    lines = shown(table)
    assert max(cell_len(line) for line in lines) <= WIDTH
    heads = [line for line in lines if "arm" in line and "baseline" in line]
    assert len(heads) >= 2, "\n".join(lines)  # the keys head every part
    assert sum("mca" in line and "single" in line for line in lines) == len(heads)
    for i in range(8):
        assert any(f"[0.{i}1," in line for line in lines) and any(f"0.{i}9]" in line for line in lines)
