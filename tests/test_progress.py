"""The live progress tells what the run decides, as the seed's interface did."""

from __future__ import annotations

from rich.console import Console

from dagmca.cli.progress import LiveProgress
from tests.conftest import RunSession
from tests.test_dag_criteria import CRITERIA_SETTINGS, responder


def test_progress_reports_flags_selection_branches_merges_and_revisits(run_fake: RunSession) -> None:
    console = Console(record=True, width=200)
    progress = LiveProgress(console)
    lines: list[str] = []
    note = progress._note

    def keep(line: str) -> None:  # the panel shows the latest ten; the test reads them all
        lines.append(line)
        note(line)

    progress._note = keep  # type: ignore[method-assign]
    run_fake(responder, events=progress, **CRITERIA_SETTINGS)
    text = "\n".join(lines)
    assert "flags (0.90) Is a flat charge fair" in text
    assert "main: selected Is a flat charge fair" in text and "kept as stubs" in text
    assert "merge of 2 branches (llm): scripted judge: converge" in text
    assert ": contradict (llm, cosine " in text  # each verdict, with who gave it
    assert ": superseded (llm, cosine " in text and ": relevant (llm, cosine " in text
    console.print(progress.render())
    panel = console.export_text()
    assert "b1: done" in panel and "tensions flagged" in panel
