"""A judge check in the graph: one `JudgeCheck` node per judge, writer, other model and
task set (running the check again replaces it, dated anew), in the store's evaluations
(`session` EVALUATION_SESSION), and the latest check of a judge as an eval reads it."""

from __future__ import annotations

import json

from dagmca.config import SessionConfig
from dagmca.evaluation.judgecheck.models import Judge, JudgeCheckReport
from dagmca.evaluation.judging import JUDGE_PROMPT_VERSION
from dagmca.graph import EVALUATION_SESSION, JudgeCheckNode, ModelRole, NodeKind, NodeRecord, node_from_record
from dagmca.llm.factory import model_name
from dagmca.store.base import GraphStore


def judge_of(base: SessionConfig) -> Judge:
    """The judge of `base`'s settings as a check and an eval name it: its role's
    backend, model and endpoint, and the pair prompt's version."""
    role = base.role(ModelRole.JUDGE)
    return Judge(
        llm=role.llm, model=model_name(role), endpoint=role.base_url, prompt_version=JUDGE_PROMPT_VERSION
    )


def check_record(report: JudgeCheckReport) -> NodeRecord:
    j = report.judge
    node = JudgeCheckNode(
        id=report.id, session=EVALUATION_SESSION, judge_llm=j.llm, judge_model=j.model,
        endpoint=j.endpoint or "", judge_prompt_version=j.prompt_version, writer=report.writer,
        other_model=report.other_model or "", tasks=report.tasks,
        checks=json.dumps([c.model_dump(mode="json") for c in report.checks], sort_keys=True),
        status=report.status.value, checked_at=report.checked_at, report=report.model_dump_json(),
    )  # fmt: skip
    return node.to_record()


def latest_check(store: GraphStore, judge: Judge) -> JudgeCheckReport | None:
    """The most recent check of `judge` (same backend, model, endpoint and pair prompt
    version); None when it was never checked."""
    checks = [node_from_record(n) for n in store.nodes(EVALUATION_SESSION, NodeKind.JUDGE_CHECK)]
    wanted = (judge.llm, judge.model, judge.endpoint or None, judge.prompt_version)
    found = [
        n
        for n in checks
        if isinstance(n, JudgeCheckNode)
        and (n.judge_llm, n.judge_model, n.endpoint or None, n.judge_prompt_version) == wanted
    ]
    if not found:
        return None
    latest = max(found, key=lambda n: n.checked_at)
    return JudgeCheckReport.model_validate_json(latest.report or "{}")


def check_judge_check(store: GraphStore, check_id: str) -> list[str]:
    """Broken invariants of a stored judge check: its node is a JudgeCheck whose report
    reads back, with the checks and status its properties say."""
    node = store.get_node(check_id)
    if node is None or node.kind is not NodeKind.JUDGE_CHECK:
        return [f"no JudgeCheck node {check_id}"]
    try:
        report = JudgeCheckReport.model_validate_json(str(node.props.get("report") or ""))
    except ValueError as exc:
        return [f"judge check {check_id}: its report does not read back ({str(exc).splitlines()[0]})"]
    problems = []
    if report.id != check_id or report.status.value != node.props.get("status"):
        problems.append(f"judge check {check_id}: its report's id or status is not the node's")
    if report.judge.model != node.props.get("judge_model"):
        problems.append(f"judge check {check_id}: its report names another judge than the node")
    return problems


def is_check(record: NodeRecord | None) -> bool:
    return record is not None and record.kind is NodeKind.JUDGE_CHECK
