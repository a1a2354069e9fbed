"""An evaluation in the graph: its node, a RAN edge to every session it ran, and a
JUDGED_AGAINST edge between two finals for every order a judge read them in, so that
"where did mca lose to vote, and why" is a Cypher query.

The node and its edges carry EVALUATION_SESSION as their `session`: an evaluation is
no session's, so each session's own graph (and its checks) stays exactly what the
session wrote, and whole-store readings (queries, exports of the store) find every
evaluation in one place, as they find the personas."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from dagmca.evaluation.judging import PairResult
from dagmca.graph import EVALUATION_SESSION, EdgeRecord, EdgeType, EvaluationNode, NodeRecord, RunStatus, edge
from dagmca.prompts.version import PROMPT_VERSION


def evaluation_id(eval_id: str) -> str:
    return f"{eval_id}/evaluation"


def final_id(session: str) -> str:
    """The id of a session's Final node."""
    return f"{session}/final"


def evaluation_record(
    eval_id: str,
    *,
    task_ids: list[str],
    arms: list[str],
    repeats: int,
    judge_model: str,
    judge_prompt_version: str,
    settings: Mapping[str, Any],
    summary: Mapping[str, Any] | None = None,
    created_at: str | None = None,
) -> NodeRecord:
    node = EvaluationNode(
        id=evaluation_id(eval_id),
        session=EVALUATION_SESSION,
        eval_id=eval_id,
        tasks=len(task_ids),
        task_ids=task_ids,
        arms=arms,
        repeats=repeats,
        judge_model=judge_model,
        judge_prompt_version=judge_prompt_version,
        debate_prompt_version=PROMPT_VERSION,
        settings=json.dumps(settings, sort_keys=True, default=str),
        summary=json.dumps(summary or {}, sort_keys=True),
        status=RunStatus.DONE if summary is not None else RunStatus.RUNNING,
        **({"created_at": created_at} if created_at else {}),
    )
    return node.to_record()


def ran_edge(
    eval_id: str, session: str, *, arm: str, task: str, repeat: int, sample: int | None = None
) -> EdgeRecord:
    # keyed by the arm, task and repeat (and a self-consistency vote's sample): one
    # session is run once per eval
    key = f"{arm}|{task}|{repeat}" + (f"|s{sample}" if sample is not None else "")
    extra = {"sample": sample} if sample is not None else {}
    return edge(
        evaluation_id(eval_id), session, EdgeType.RAN, EVALUATION_SESSION,
        key=key, arm=arm, task=task, repeat=repeat, **extra,
    )  # fmt: skip


def judged_edges(
    eval_id: str, arm_final: str, baseline_final: str, result: PairResult, trial: int
) -> list[EdgeRecord]:
    """One edge per order and criterion (overall, and each the judge gave), from the
    arm's final to the baseline's, its verdict from the arm's side; the combined verdict
    (both orders agreeing, else a tie; `no_verdict` or `unjudged` when an order was not
    read) on each too."""
    return [
        edge(
            arm_final,
            baseline_final,
            EdgeType.JUDGED_AGAINST,
            EVALUATION_SESSION,
            key=f"{eval_id}|{v.order}|{v.criterion}|{trial}",
            eval_id=eval_id,
            verdict=v.verdict,
            combined=result.verdict
            if v.criterion == result.criterion
            else result.criteria.get(v.criterion, "no_verdict"),
            order=v.order,
            criterion=v.criterion,
            reason=v.reason,
            trial=trial,
            **({"degenerate": True} if v.degenerate else {}),
        )
        for v in result.orders
    ]
