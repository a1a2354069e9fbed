"""Judge-role prompts are sized to the judge's own model's context window, not the
debaters': a judge on a smaller window gets its quotes cut to fit it, one on a larger
window keeps what the debaters' window would have cut."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagmca.config import SessionConfig
from dagmca.config.roles import RoleSettings
from dagmca.graph import ModelRole
from dagmca.llm.fake import ScriptedLLM
from dagmca.llm.tokens import ASSUMED_WINDOW, TokenCounter
from dagmca.prompts import ledger as ledger_prompts
from dagmca.prompts import templates as tpl
from dagmca.prompts.budget import PromptBudget
from dagmca.store.sqlite import SQLiteStore
from dagmca.workspace.session import role_window
from tests.support.sessions import run_scripted

LONG = " ".join(f"Sentence {i} says the toll moved traffic to street {i}." for i in range(400))


def budget(window: int) -> PromptBudget:
    return PromptBudget(TokenCounter(), window=window, turn=200, flag=200, synthesis=300, final=400)


def frame(debate: int, judge: int | None) -> tpl.Frame:
    return tpl.Frame(
        question="Is the toll fair?",
        passage=tpl.passage_block("A city charges drivers to enter its centre."),
        budget=budget(debate),
        judge=budget(judge) if judge is not None else None,
    )


@pytest.mark.parametrize(
    ("debate", "judge"),
    [(32_768, 2_048), (2_048, 32_768)],
    ids=["judge-smaller", "judge-larger"],
)
def test_judge_prompts_fit_the_judges_window(debate: int, judge: int) -> None:
    own = frame(debate, judge)
    for prompt, reserve in (
        (tpl.judge_stub(own, "Did traffic move?", "The new text", LONG), 200),
        (tpl.judge_pair(own, ("Q1", LONG), ("Q2", "Traffic moved.")), 200),
        (tpl.synthesize(own, [("Q1", LONG), ("Q2", "Traffic moved.")]), 300),
        (ledger_prompts.split_claims(own, "the final answer", LONG, 8), 300),
    ):
        assert prompt.tokens <= budget(judge).available(reserve)
        if judge < debate:  # cut to the judge's window, below what the debaters' allows
            assert prompt.omitted_chars > 0
        else:  # whole, where the debaters' window would have cut it
            assert prompt.omitted_chars == 0
            assert prompt.tokens > budget(debate).available(reserve)
    # a debate-role prompt of the same frame stays on the debaters' window
    turn = tpl.messages(own, [tpl.quote("Earlier", LONG)], 200)
    assert turn.tokens <= budget(debate).available(200)
    assert (turn.omitted_chars > 0) == (debate < judge)


def test_without_a_judge_window_the_judge_uses_the_debaters() -> None:
    same = frame(4_096, None)
    assert same.judging is same.budget
    prompt = tpl.judge_stub(same, "Did traffic move?", "The new text", LONG)
    assert prompt.tokens <= budget(4_096).available(200) and prompt.omitted_chars > 0


@pytest.mark.parametrize("judge", [1_024, 65_536])
def test_a_session_sizes_its_judge_budget_from_the_judge_role(
    store: SQLiteStore, tmp_path: Path, judge: int
) -> None:
    roles = {ModelRole.JUDGE: RoleSettings(context_window=judge)}
    result, state, _ = run_scripted(
        store, tmp_path, None, context_window=8_192, roles=roles, max_depth=0, rounds=1, ledger="final"
    )
    assert result.session.status == "done"
    assert state.prompts.budget.window == 8_192
    assert state.prompts.judge_budget is not None and state.prompts.judge_budget.window == judge
    debate = next(iter(state.graph.debates.values()))
    assert state.prompts.frame(debate)().judging.window == judge


def test_a_judge_on_another_model_does_not_inherit_the_sessions_window() -> None:
    client = ScriptedLLM(model="small")
    other = SessionConfig(
        llm="fake", model="small", context_window=4_096, roles={ModelRole.JUDGE: RoleSettings(model="big")}
    )
    assert role_window(other, ModelRole.DEBATE, client).tokens == 4_096
    assert role_window(other, ModelRole.JUDGE, client).tokens == ASSUMED_WINDOW
    own = other.model_copy(
        update={"roles": {ModelRole.JUDGE: RoleSettings(model="big", context_window=16_384)}}
    )
    assert role_window(own, ModelRole.JUDGE, client).tokens == 16_384
    same = other.model_copy(update={"roles": {}})
    assert role_window(same, ModelRole.JUDGE, client).tokens == 4_096
