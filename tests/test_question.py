"""Question sessions: the debates address the user's question (with or without a
passage), the final text answers it, and one structured call of the final role takes
the short answer a scorer reads; a resume keeps the question."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

import dagmca
from dagmca import errors
from dagmca.api import Workspace
from dagmca.graph import CallPhase
from dagmca.llm.fake import ScriptedCall, ScriptedLLM, default_responder
from dagmca.prompts.schemas import ShortAnswer
from dagmca.prompts.templates import MAIN_QUESTION, NO_PASSAGE
from dagmca.similarity import HashingEmbedder
from tests.support.sessions import PASSAGE

QUESTION = "Should a city with chronic congestion introduce a flat road charge?"
SMALL = {"max_depth": 1, "max_branches": 2, "rounds": 1}


def answering(answer: str | None) -> ScriptedLLM:
    """The default fake, whose short-answer call gives `answer` (None: that call fails)."""

    def respond(call: ScriptedCall) -> object:
        if call.schema is ShortAnswer:
            return None if answer is None else {"answer": answer}
        if call.meta.phase == CallPhase.FINAL:
            return f"Yes, with exemptions. {answer or ''} The branches agreed on revenue recycling."
        return default_responder(call)

    return ScriptedLLM(respond)


def run(tmp_path: Path, client: ScriptedLLM, passage: str | None, **kw: object) -> dagmca.RunResult:
    return dagmca.run(
        passage,
        question=QUESTION,
        store=tmp_path / "q.db",
        client=client,
        embedder=HashingEmbedder(),
        settings=SMALL,
        **kw,  # type: ignore[arg-type]
    )


def test_the_debates_address_the_question_and_the_final_carries_a_short_answer(tmp_path: Path) -> None:
    client = answering("Yes, with exemptions for low-wage workers")
    result = run(tmp_path, client, PASSAGE)
    assert result.session.question == QUESTION
    assert result.final is not None and result.final.answer == "Yes, with exemptions for low-wage workers"
    main_turns = [c for c in client.calls if c.meta.debate.endswith("/main") and c.meta.agent.startswith("L")]
    assert main_turns and all(f"Question under debate: {QUESTION}" in c.prompt for c in main_turns)
    assert not any(MAIN_QUESTION in c.prompt for c in client.calls)
    assert all(PASSAGE in c.prompt for c in main_turns)
    # the final integration is asked to answer the question; the short answer reads its text
    final = next(c for c in client.calls if c.meta.phase == CallPhase.FINAL and c.schema is None)
    assert "answer it directly" in final.prompt
    short = [c for c in client.calls if c.schema is ShortAnswer]
    assert len(short) == 1 and "Yes, with exemptions." in short[0].prompt


def test_a_question_needs_no_passage(tmp_path: Path) -> None:
    client = answering("42")
    result = run(tmp_path, client, None)
    assert result.status == "done" and result.final is not None and result.final.answer == "42"
    assert all(NO_PASSAGE in c.prompt for c in client.calls)
    assert result.session.passage == "" and result.session.title == QUESTION


@pytest.mark.parametrize("given", [None, "no answer", "No answer."])
def test_no_answer_is_kept_as_none_never_invented(tmp_path: Path, given: str | None) -> None:
    result = run(tmp_path, answering(given), PASSAGE)
    assert result.final is not None and result.final.text and result.final.answer is None


def test_without_a_question_there_is_no_short_answer_call(tmp_path: Path) -> None:
    client = answering("unused")
    result = dagmca.run(
        PASSAGE, store=tmp_path / "p.db", client=client, embedder=HashingEmbedder(), settings=SMALL
    )
    assert result.final is not None and result.final.answer is None and result.session.question is None
    assert not [c for c in client.calls if c.schema is ShortAnswer]


def test_a_resume_keeps_the_question(tmp_path: Path) -> None:
    async def main() -> None:
        async with Workspace(tmp_path / "r.db", embedder=HashingEmbedder()) as ws:
            first = await ws.run(
                PASSAGE, question=QUESTION, client=answering("Yes"), settings={**SMALL, "max_llm_calls": 5}
            )
            assert first.status == "budget_exhausted"
            client = answering("Yes")
            again = await ws.resume(first.id, client=client, max_llm_calls=10_000)
            assert again.status == "done" and again.final is not None and again.final.answer == "Yes"
            asked = [
                c for c in client.calls if c.meta.debate.endswith("/main") and c.meta.agent.startswith("L")
            ]
            assert asked and all(f"Question under debate: {QUESTION}" in c.prompt for c in asked)

    asyncio.run(main())


def test_nothing_to_debate_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(errors.UserError, match="nothing to debate"):
        dagmca.run(store=tmp_path / "n.db", llm="fake", embedder=HashingEmbedder())
    with pytest.raises(errors.UserError, match="question is empty"):
        dagmca.run(question="  ", store=tmp_path / "n.db", llm="fake", embedder=HashingEmbedder())
