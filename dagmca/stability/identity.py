"""What a study's findings are bound to: the members it aligned (each session's tensions,
claims and answer, by id and text), the judge that aligned them (its backend, model,
endpoint, sampling and prompts) and the prefilter. The default study id is a digest of
them, so aligning the same sessions again is the same study (its judgments replayed
from the cache) and aligning changed ones (a revisit integrated a final again) another;
a study id given again for other inputs is refused, never overwritten."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from dagmca.config import SessionConfig
from dagmca.errors import UserError
from dagmca.graph import FindingKind, ModelRole
from dagmca.llm.factory import model_name
from dagmca.prompts.alignment import ALIGN_PROMPT_VERSION
from dagmca.stability.members import Sample
from dagmca.store.base import GraphStore
from dagmca.store.findings import study_findings

STUDY_PREFIX = "stability-"


def inputs_digest(samples: Sequence[Sample], cfg: SessionConfig, prefilter: float, per_member: int) -> str:
    judge = cfg.role(ModelRole.JUDGE)
    made = {
        "samples": [
            {kind.value: [(m.id, m.text) for m in (s.of(kind) or [])] for kind in FindingKind}
            for s in samples
        ],
        "judge": {
            "llm": judge.llm, "model": model_name(judge), "base_url": judge.base_url,
            "temperature": judge.temperature, "seed": judge.seed, "sampling": judge.sampling,
            "local_model": judge.local_model, "reasoning_effort": judge.reasoning_effort,
        },
        "prefilter": prefilter,
        "per_member": per_member,
        "prompts": ALIGN_PROMPT_VERSION,
    }  # fmt: skip
    return hashlib.sha256(json.dumps(made, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def default_study(inputs: str) -> str:
    return STUDY_PREFIX + inputs[:12]


def refuse_other_inputs(store: GraphStore, study: str, inputs: str) -> None:
    """A study whose findings the store holds from other inputs is not written over."""
    held = {str(n.props.get("inputs", "")) for n in study_findings(store, study)}
    if held and held != {inputs}:
        raise UserError(
            f"study {study} already holds findings aligned from other sessions, texts or judge settings",
            "choose another study id, or leave it out for one made from the inputs",
        )
