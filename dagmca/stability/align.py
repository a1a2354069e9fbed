"""A study: several sessions of one passage aligned into findings, each with how many of
the samples reach it.

In order: the sessions are read and refused unless they debate one passage and question;
the embedding prefilter picks the pairs the judge reads (no call); their cost is
projected and told (`on_estimate`) before the first call; the judge reads each pair in
both orders (answers go to the scorer); the matches are grouped so that every two
members of a finding were judged a match; the findings, with every verdict, are written
under the study's lease. Every judge call is logged under the study's id and kept in the
response cache, so a study run again (after a kill, or with a raised budget) asks
nothing it asked before. A study with a pair left unjudged (the budget spent, a call
failed) is reported but not written: the graph holds complete studies only."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations

from dagmca.config import SessionConfig
from dagmca.errors import EndpointError
from dagmca.graph import AlignVerdict, FindingKind, ModelRole, NodeRecord
from dagmca.llm.base import EndpointDown
from dagmca.llm.factory import Backend
from dagmca.llm.metered import Budget, MeteredLLM
from dagmca.llm.tokens import TokenCounter
from dagmca.prompts.alignment import ALIGN_PROMPT_VERSION, study_frame
from dagmca.stability import grouping
from dagmca.stability.candidates import Candidate, candidates
from dagmca.stability.estimate import align_cost, judge_budget
from dagmca.stability.identity import default_study, inputs_digest, refuse_other_inputs
from dagmca.stability.judging import Judge, Judged, same_answer
from dagmca.stability.measures import is_core, overlaps, reach, recurrence, shares
from dagmca.stability.members import Member, Sample, read_samples
from dagmca.stability.models import AlignCost, AlignSpend, FindingRow, SampleInfo, StabilityReport, Verdicts
from dagmca.stability.records import finding_id, finding_records
from dagmca.workspace import BaseWorkspace, ClientLike, Handed
from dagmca.workspace.session import SharedResources, role_window

JUDGED_KINDS = (FindingKind.TENSION, FindingKind.CLAIM)  # the kinds the LLM judge reads
PER_MEMBER = 3  # candidates a member gets in each other session, the most similar


@dataclass(frozen=True)
class AlignPlan:
    """Which sessions, under which study id (None: from the inputs), with how many
    candidates a member, from which cosine (None: the settings' duplicate prefilter);
    `dry_run`: the estimate only."""

    sessions: Sequence[str]
    study: str | None = None
    per_member: int = PER_MEMBER
    prefilter: float | None = None
    dry_run: bool = False


async def align(
    ws: BaseWorkspace,
    plan: AlignPlan,
    cfg: SessionConfig,
    *,
    client: ClientLike | None = None,
    backend: Backend | Handed | None = None,
    shared: SharedResources | None = None,
    infos: Sequence[SampleInfo] | None = None,
    on_estimate: Callable[[AlignCost], None] | None = None,
) -> StabilityReport:
    """Align `plan`'s sessions with `cfg`'s judge role (on `backend`, else the
    workspace's for `cfg` or `client` wrapped; within `shared`'s limit and spend when
    given). `infos`: the samples as a run made them (else read from their sessions)."""
    store = ws.store
    samples = await store.aread(lambda s: read_samples(s, plan.sessions))
    prefilter = cfg.duplicate_prefilter if plan.prefilter is None else plan.prefilter
    inputs = inputs_digest(samples, cfg, prefilter, plan.per_member)
    study = plan.study or default_study(inputs)
    await store.aread(lambda s: refuse_other_inputs(s, study, inputs))
    first = await store.aread(lambda s: s.get_node(samples[0].session))
    assert first is not None
    passage, question = str(first.props.get("passage", "")), samples[0].question
    kinds = [k for k in FindingKind if sum(1 for s in samples if s.of(k) is not None) >= 2]
    picked = {
        k: await candidates(
            ws.embedder, _members(samples, k), prefilter=prefilter, per_member=plan.per_member
        )
        for k in kinds
        if k in JUDGED_KINDS
    }
    scored = _answer_pairs(samples) if FindingKind.ANSWER in kinds else []
    frame = study_frame(passage, question, judge_budget(cfg), cfg.passage_share)
    estimate = align_cost(cfg, frame, picked, len(scored))
    if on_estimate is not None:
        on_estimate(estimate)
    if infos is None:
        infos = [_info(i, node) for i, node in enumerate(await _sessions(ws, samples))]
    report = StabilityReport(
        study=study, passage_sha256=str(first.props.get("passage_sha256", "")), question=question,
        n=len(samples), samples=list(infos), estimate=estimate,
        untraced=[s.session for s in samples if s.claims is None],
    )  # fmt: skip
    if plan.dry_run:
        return report
    async with ws.lease(study):
        judged, spent = await _judged(ws, cfg, study, picked, (passage, question), client, backend, shared)
        judged += [same_answer(c) for c in scored]
        findings = [f for k in kinds for f in _findings(study, k, samples, judged)]
        report = _measured(report, samples, findings, judged, spent)
        if report.verdicts.unjudged:
            note = (
                f"{report.verdicts.unjudged} pairs were not judged (the budget is spent, or the judge's call "
                "failed): the findings are not written; run it again (with a raised budget) to finish"
            )
            return report.model_copy(update={"notes": [*report.notes, note]})
        # again under the lease: another process may have written the study meanwhile
        await store.aread(lambda s: refuse_other_inputs(s, study, inputs))
        counted = {k: [s.session for s in samples if s.of(k) is not None] for k in kinds}
        nodes, edges = finding_records(
            study, findings, judged, samples=counted, inputs=inputs, prompt_version=ALIGN_PROMPT_VERSION
        )
        store.write(nodes, edges)
        await store.flush()
    return report.model_copy(update={"written": True})


def _members(samples: Sequence[Sample], kind: FindingKind) -> list[list[Member]]:
    return [members for s in samples if (members := s.of(kind)) is not None]


def _answer_pairs(samples: Sequence[Sample]) -> list[Candidate]:
    answers = [m for s in samples for m in (s.of(FindingKind.ANSWER) or [])]
    return [Candidate(a, b, 1.0) for a, b in combinations(answers, 2)]


async def _sessions(ws: BaseWorkspace, samples: Sequence[Sample]) -> list[NodeRecord]:
    ids = [s.session for s in samples]
    found = await ws.store.aread(lambda st: [st.get_node(sid) for sid in ids])
    return [node for node in found if node is not None]


def _info(i: int, node: NodeRecord) -> SampleInfo:
    settings = json.loads(str(node.props.get("config") or "{}"))
    return SampleInfo(
        session=node.id, sample=i + 1, model=str(node.props.get("model", "")), seed=settings.get("seed"),
        temperature=settings.get("temperature"), status=str(node.props.get("status", "")),
    )  # fmt: skip


async def _judged(
    ws: BaseWorkspace,
    cfg: SessionConfig,
    study: str,
    picked: dict[FindingKind, list[Candidate]],
    text: tuple[str, str | None],
    client: ClientLike | None,
    backend: Backend | Handed | None,
    shared: SharedResources | None,
) -> tuple[list[Judged], AlignSpend | None]:
    """Every candidate judged in both orders, on the judge role's client, its calls
    logged under `study`; a study run again replays what it asked before."""
    todo = [c for found in picked.values() for c in found]
    if not todo:
        return [], None
    store = ws.store
    backend = backend or await ws.backend(cfg, client)
    earlier = await store.aread(lambda s: s.calls(study))
    llm = MeteredLLM.for_session(
        cfg, backend.client, calls=store, session=study, budget=Budget.of(cfg), replaying=bool(earlier),
        gate=shared.gate if shared else None, pool=shared.pool if shared else None,
    )  # fmt: skip
    llm.restore(earlier, replayed=True)
    passage, question = text
    try:
        await llm.ping()
        window = role_window(cfg, ModelRole.JUDGE, backend.client).tokens
        counter = TokenCounter.calibrated(passage, await backend.client.count_tokens(passage))
        frame = study_frame(passage, question, judge_budget(cfg, window, counter), cfg.passage_share)
        judge = cfg.role(ModelRole.JUDGE)
        j = Judge(llm, frame, cap=judge.flag_tokens(), temperature=judge.temperature, seed=judge.seed)
        judged = list(await asyncio.gather(*(j.pair(c) for c in todo)))
    except EndpointDown as exc:
        raise EndpointError(str(exc), f"every finished judgment is kept; run study {study} again") from None
    m = llm.meter
    spent = AlignSpend(
        calls=m.calls, cache_hits=m.cache_hits, tokens=m.usage.total, cost_usd=round(m.cost_usd, 6)
    )
    return judged, spent


def _findings(
    study: str, kind: FindingKind, samples: Sequence[Sample], judged: Sequence[Judged]
) -> list[FindingRow]:
    counted = [s for s in samples if s.of(kind) is not None]
    model = {s.session: s.model for s in samples}
    members = [m for s in counted for m in (s.of(kind) or [])]
    rows = []
    for number, group in enumerate(grouping.groups(members, [j for j in judged if j.first.kind is kind]), 1):
        k, n = len(group), len(counted)
        rate, lo, hi = recurrence(k, n)
        rows.append(
            FindingRow(
                id=finding_id(study, kind, number), kind=kind, k=k, n=n, rate=rate, lo=lo, hi=hi,
                core=is_core(k, n), sessions=[m.session for m in group], members=[m.id for m in group],
                text=group[0].text, models=[model[m.session] for m in group],
                origins=[m.origin for m in group] if kind is FindingKind.CLAIM else [],
            )
        )  # fmt: skip
    return rows


def _measured(
    report: StabilityReport,
    samples: Sequence[Sample],
    findings: list[FindingRow],
    judged: Sequence[Judged],
    spent: AlignSpend | None,
) -> StabilityReport:
    models, every = reach(samples, findings)
    verdicts = Verdicts(
        compared=len(judged),
        match=sum(1 for j in judged if j.verdict is AlignVerdict.MATCH),
        distinct=sum(1 for j in judged if j.verdict is AlignVerdict.DISTINCT),
        undecided=sum(1 for j in judged if j.verdict is AlignVerdict.UNDECIDED and not j.unjudged),
        unjudged=sum(1 for j in judged if j.unjudged),
    )
    ranked = sorted(findings, key=lambda f: (-f.rate, list(FindingKind).index(f.kind), f.id))
    return report.model_copy(
        update={
            "findings": ranked, "core": sum(1 for f in findings if f.core),
            "once": sum(1 for f in findings if f.k == 1), "shares": shares(report.study, samples, findings),
            "overlaps": overlaps(samples, findings), "models": models, "every_model": every,
            "verdicts": verdicts, "spent": spent,
        }
    )  # fmt: skip
