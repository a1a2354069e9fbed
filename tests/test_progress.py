"""The live progress tells what the run decides, as the seed's interface did."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from dagmca.cli.progress import LiveProgress
from tests.support.criteria import CRITERIA_SETTINGS, responder
from tests.support.sessions import RunSession


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


def test_the_build_display_counts_passages_calls_and_the_rate(tmp_path: Path) -> None:
    from dagmca.cli.progress import BuildProgress
    from dagmca.config import SessionConfig
    from dagmca.corpus.build import Build
    from dagmca.corpus.sources import Passage
    from dagmca.graph import PassageStatus
    from dagmca.llm.fake import ScriptedLLM
    from dagmca.llm.limiter import RateLimiter
    from dagmca.llm.metered import MeteredLLM
    from dagmca.store.sqlite import SQLiteStore

    passages = [Passage(f"p{i}", f"p{i}.txt", f"Text {i}.", f"T{i}") for i in range(5)]
    with SQLiteStore(tmp_path / "b.db") as store:
        job = Build(SessionConfig(llm="fake"), store, passages, reports=lambda s: tmp_path / s)
        states = ["done", "done", "running", "waiting", "failed"]
        for outcome, status in zip(job.outcomes.values(), states, strict=True):
            outcome.status = PassageStatus(status)
        meter = MeteredLLM(ScriptedLLM(), concurrency=1)
        meter.meter.calls, meter.meter.cache_hits = 42, 7
        job.outcomes["p2"].meters.append(meter)
        job.outcomes["p2"].phase = "main debate"
        job.limiter = RateLimiter(rpm=600)
        console = Console(record=True, width=200)
        console.print(BuildProgress(console, job).render())
    panel = console.export_text()
    assert "2 done, 1 running, 1 left, 1 failed" in panel
    assert "42 (7 from the cache)" in panel
    assert "588/min aimed at" in panel and "0 rate-limited replies" in panel
    assert "p2: running main debate" in panel
