"""An evaluation's report put together from what it found: each arm's row (with its
model and temperature, and its ledger's control), the comparisons, the criteria, the
noise floors, the judge with its latest check, and the notices to read them by: order
splits, a win that may be length, a judge grading its own model, shares with no control."""

from __future__ import annotations

from collections.abc import Sequence

from dagmca.config import SessionConfig
from dagmca.evaluation.arms import Arm
from dagmca.evaluation.breakdown import Cost, criterion_comparisons, eval_spend
from dagmca.evaluation.identity import RoleModel, models_of
from dagmca.evaluation.judgecheck.models import JudgeCheckReport
from dagmca.evaluation.judging import JUDGE_PROMPT_VERSION, ORDERS
from dagmca.evaluation.noise import floor_arms, noise_floors
from dagmca.evaluation.notices import (
    Notice,
    may_be_length,
    no_control,
    not_scored,
    order_splits,
    self_preference,
)
from dagmca.evaluation.origins import ControlRow, above_control, control_shares
from dagmca.evaluation.plan import EvalPlan, arm_config, control_arm, temperature_of, traced_arms, varying
from dagmca.evaluation.report import (
    ArmRow,
    Comparison,
    EvalReport,
    JudgeInfo,
    RunRecord,
    Verdict,
    arm_row,
    comparisons,
    result_rows,
    unread,
)
from dagmca.graph import ModelRole
from dagmca.llm.factory import model_name
from dagmca.prompts.version import PROMPT_VERSION


def installed_version() -> str:
    """dagmca's version as installed (the package's metadata: read without importing the
    package's root, which is above this layer)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dagmca")
    except PackageNotFoundError:
        return ""


def arm_model(plan: EvalPlan, base: SessionConfig, name: str) -> RoleModel:
    """The model an arm's debaters answered with, under its own settings."""
    arm = next(a for a in plan.arms if a.name == name)
    own = arm_config(arm, base).role(ModelRole.DEBATE)
    return RoleModel(
        role=ModelRole.DEBATE.value, llm=own.llm, model=model_name(own), base_url=own.base_url,
        temperature=temperature_of(arm, base, plan),
    )  # fmt: skip


def noise_arms(plan: EvalPlan, base: SessionConfig) -> list[str]:
    """The arms a noise floor is run for (none without `--noise-floor` and repeats)."""
    if not plan.noise_floor or plan.repeats < 2:
        return []
    return floor_arms(varying(plan, base), [a.name for a in plan.arms])


def notices(rows: Sequence[Comparison], judge: str | None, models: dict[str, RoleModel]) -> list[Notice]:
    """What to read the numbers with: each judged comparison's order splits above the
    threshold and a win that may be length; a judge that is an arm's model."""
    found: list[Notice | None] = []
    for c in rows:
        if c.kind == "judged":
            found.append(order_splits(c.arm, c.baseline, c.order_splits or 0, c.order_split_rate))
            found.append(may_be_length(c.arm, c.baseline, c.p_holm, c.lc_win_rate, c.lc_lo, c.lc_hi))
    if judge is not None:
        found.append(self_preference(judge, [name for name, m in models.items() if m.model == judge]))
    return [n for n in found if n is not None]


def unscored(plan: EvalPlan, base: SessionConfig) -> list[Notice]:
    """A line for each arm a task set leaves nothing to compare on (first-vote on open
    tasks), and one for traced arms with no control."""
    open_tasks = sum(1 for t in plan.tasks if t.judged)
    found = [not_scored(a.name, open_tasks) for a in plan.arms if a.kind.derived]
    if control_arm(plan.arms) is None:
        found.append(no_control([a.name for a in traced_arms(plan.arms, base)]))
    return [n for n in found if n is not None]


def controlled(row: ArmRow, runs: Sequence[RunRecord], controls: Sequence[ControlRow], seed: int) -> ArmRow:
    """An arm's row with its control's shares and its emergent share above them."""
    mine = [c for c in controls if c.arm == row.arm]
    if not mine:
        return row
    above = above_control(runs, mine, seed)
    return row.model_copy(update={"control": control_shares(mine, seed), "emergent_above_control": above})


def against_control(rows: list[Comparison], arms: Sequence[ArmRow], control: Arm | None) -> list[Comparison]:
    """The comparisons of a traced arm with the control's arm, each with the traced
    arm's emergent share above the control's."""
    if control is None:
        return rows
    above = {a.arm: a.emergent_above_control for a in arms if a.emergent_above_control is not None}
    found = []
    for c in rows:
        traced = c.arm if c.baseline == control.name else c.baseline if c.arm == control.name else None
        difference = above.get(traced) if traced is not None else None
        found.append(c if difference is None else c.model_copy(update={"emergent_above_control": difference}))
    return found


def build_report(
    plan: EvalPlan,
    base: SessionConfig,
    runs: Sequence[RunRecord],
    verdicts: Sequence[Verdict],
    *,
    skipped: int,
    judge_model: str | None,
    judge_cost: Cost,
    check: JudgeCheckReport | None = None,
    controls: Sequence[ControlRow] = (),
) -> EvalReport:
    """The report of `plan` from its runs, verdicts and ledger controls; `judge_model`
    None when nothing was judged."""
    names = [a.name for a in plan.arms]
    seed = base.seed
    models = {a.name: arm_model(plan, base, a.name) for a in plan.arms}
    arms = []
    for a in plan.arms:
        mine = [r for r in runs if r.arm == a.name]
        row = arm_row(a.name, mine, len(plan.tasks), seed=seed).model_copy(
            update={"temperature": models[a.name].temperature, "model": models[a.name]}
        )
        arms.append(controlled(row, mine, controls, seed))
    rows = against_control(comparisons(names, runs, verdicts, seed=seed), arms, control_arm(plan.arms))
    judged = {a.name: m for a, m in zip(plan.arms, models.values(), strict=True) if not a.kind.derived}
    judge = None
    if judge_model is not None:
        trials, version = plan.judge_trials, JUDGE_PROMPT_VERSION
        judge = JudgeInfo(
            model=judge_model, orders=len(ORDERS), trials=trials, prompt_version=version, check=check
        )
    return EvalReport(
        eval_id=plan.eval_id, task_set=plan.task_set, dagmca_version=installed_version(),
        prompt_version=PROMPT_VERSION,
        tasks=len(plan.tasks), repeats=plan.repeats, arms=arms, comparisons=rows,
        criteria=criterion_comparisons(names, verdicts, seed=seed), judge=judge,
        noise_floors=noise_floors(noise_arms(plan, base), runs, verdicts, seed=seed),
        notices=notices(rows, judge_model, judged) + unscored(plan, base), skipped=skipped,
        unjudged=unread(verdicts, "unjudged"), no_verdict=unread(verdicts, "no_verdict"),
        models=models_of(base), match=plan.match, spend=eval_spend(runs, judge_cost, controls),
        results=result_rows(sorted(runs, key=lambda r: (names.index(r.arm), r.task, r.repeat))),
        controls=sorted(controls, key=lambda c: (names.index(c.arm), c.task, c.repeat)),
    )  # fmt: skip
