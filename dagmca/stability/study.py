"""A study run whole (`run --samples N`): the samples first, then their alignment, in
one workspace, on one concurrency limit and spend. The same call again is the same
study: ended samples are skipped, cut ones resumed, and the alignment's judgments
replayed from the cache."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from dagmca.config import SessionConfig
from dagmca.stability.align import PER_MEMBER, AlignPlan, align
from dagmca.stability.models import AlignCost, SampleInfo, StabilityReport
from dagmca.stability.samples import SampleRuns, Vary, sample_settings, samples_study, session_ids
from dagmca.workspace import BaseWorkspace, ClientLike


@dataclass(frozen=True)
class SamplePlan:
    """`samples` sessions, varied by `vary` (seed always; temperature or model from
    `temperatures`, `models`), under `study` (None: from the inputs), `parallel` at a
    time (None: 1 on the local model, else half the concurrency, at least 2)."""

    samples: int
    vary: Vary = "seed"
    models: Sequence[str] = ()
    temperatures: Sequence[float] = ()
    study: str | None = None
    parallel: int | None = None
    per_member: int = PER_MEMBER
    prefilter: float | None = None


def parallel_default(cfg: SessionConfig, samples: int) -> int:
    return min(samples, 1 if cfg.llm == "local" else max(2, cfg.concurrency // 2))


async def run_study(
    ws: BaseWorkspace,
    text: str,
    question: str | None,
    base: SessionConfig,
    plan: SamplePlan,
    *,
    client: ClientLike | None = None,
    on_done: Callable[[SampleInfo], None] | None = None,
    on_estimate: Callable[[AlignCost], None] | None = None,
) -> StabilityReport:
    """The samples of `plan` on `text` (and `question`), then their findings."""
    configs = sample_settings(
        base, plan.samples, plan.vary, models=plan.models, temperatures=plan.temperatures
    )
    study = plan.study or samples_study(text, question, configs)
    ids = session_ids(study, plan.samples)
    runs = SampleRuns(ws, base, client)
    parallel = plan.parallel or parallel_default(base, plan.samples)
    infos = await runs.run(configs, ids, text, question, parallel=parallel, on_done=on_done)
    report = await align(
        ws,
        AlignPlan(ids, study=study, per_member=plan.per_member, prefilter=plan.prefilter),
        base,
        client=client,
        backend=await runs.backend(base),
        shared=runs.shared,
        infos=infos,
        on_estimate=on_estimate,
    )
    notes = []
    if plan.vary == "seed" and all(c.temperature == 0 for c in configs):
        notes.append(
            "the samples differ by their seed alone at temperature 0: an endpoint that decodes greedily "
            "gives one sample N times (--vary temperature, or a temperature above 0, samples for real)"
        )
    return report.model_copy(update={"notes": [*report.notes, *notes]})
