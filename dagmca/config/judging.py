"""The judge's settings: who decides merges, relations, stub revisits and duplicate
questions, from which similarity a candidate reaches it, and the emergence ledger, which
judges where each claim of an answer came from. One group of the session's settings
(groups.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from dagmca.graph import Strict


class JudgeSettings(Strict):
    """judge: who decides merges, relations, duplicates and stub revisits, from which cosine;
    and the emergence ledger, which judges where each claim of an answer came from."""

    # merging, relations and stubs: an embedding prefilter picks candidates, the judge
    # decides (the thresholds come from scripts/calibrate_judge.py; README "Decisions")
    judge: Literal["llm", "embedding"] = Field(
        "llm",
        description="Who decides merges, relations and stub revisits: llm (a judge with a recorded "
        "verdict and reason) or embedding (similarity alone, for budget runs)",
    )
    # the thresholds below are calibrated on the default (docs/concepts/embeddings.md)
    embedder: Literal["minilm", "minilm-onnx", "minilm-onnx-int8", "static"] = Field(
        "static",
        description="Sentence embedder of the prefilters and similarities: static (all-MiniLM-L6-v2 "
        "distilled, shipped), minilm (the minilm extra), minilm-onnx or minilm-onnx-int8 (the onnx extra)",
    )
    pair_prefilter: float = Field(
        0.35,
        ge=0.0,
        le=1.0,
        description="Cosine of two branches' resolutions from which the judge compares them",
    )
    stub_prefilter: float = Field(
        0.3,
        ge=0.0,
        le=1.0,
        description="Cosine of a stub's question and a new text from which the judge checks it",
    )
    merge_threshold: float = Field(
        0.7, ge=0.0, le=1.0, description="With --judge embedding: cosine from which finished branches merge"
    )
    revisit_threshold: float = Field(
        0.5, ge=0.0, le=1.0, description="With --judge embedding: cosine from which a stub is explored again"
    )
    reference_threshold: float = Field(
        0.75,
        ge=0.0,
        le=1.0,
        title="Cosine from which a turn gets a references edge to a sibling's output it did not cite",
    )
    # the lowest cosine that merges no pair of different questions in the labelled set
    # (scripts/calibrate_duplicates.py): embeddings cannot tell a paraphrase from another
    # question in the same words, so only near-restatements merge (the static embedder,
    # blind to word order, scores such pairs higher than MiniLM: the bound is its)
    duplicate_threshold: float = Field(
        0.98,
        ge=0.0,
        le=1.0,
        title="With --judge embedding: cosine from which two open stubs ask the same question",
    )
    # Across the session, when a level of debates is done, each new open stub's most
    # similar earlier open stub is a candidate from this cosine, and the judge decides:
    # the highest that keeps, on the default embedder, as many labelled paraphrases as
    # MiniLM kept at its own prefilter (scripts/calibrate_duplicates.py)
    duplicate_prefilter: float = Field(
        0.52,
        ge=0.0,
        le=1.0,
        description="Cosine of two open stubs' questions from which the judge checks whether they ask "
        "the same (1 turns it off; with --judge embedding, the duplicate threshold 0.98 decides)",
    )
    max_stub_checks: int = Field(
        8,
        ge=0,
        le=10_000,
        description="Open stubs the judge checks against each new text: the most similar past the "
        "prefilter; the rest stay open, recorded as not judged (local model: 3)",
    )
    # The emergence ledger always asks the judge: similarity cannot tell a claim from its
    # reversal in the same words, so --judge embedding does not apply to it. auto: final on
    # an endpoint; off for the embedded CPU model, where each verdict reads several earlier
    # texts at prompt-processing speed and tracing would cost more than the session itself
    # (as with the observers' auto mode, the local model is for trying the tool).
    ledger: Literal["auto", "off", "final", "all"] = Field(
        "auto",
        description="The emergence ledger: split the final answer (final), or also every synthesis and "
        "resolution (all), into claims and judge which turns state each; off; auto: final, off for the "
        "local model",
    )
    ledger_max_claims: int = Field(
        12, ge=1, le=50, description="Ledger: claims a traced text is split into, at most"
    )
    # a cosine that passes every claim of the labelled set that a text states or partly
    # states, with a margin below the lowest of them (scripts/calibrate_ledger.py)
    ledger_prefilter: float = Field(
        0.4,
        ge=0.0,
        le=1.0,
        description="Ledger: cosine of a claim and an earlier text's closest sentence from which the "
        "judge reads that text",
    )
    ledger_candidates: int = Field(
        8,
        ge=1,
        le=50,
        description="Ledger: earlier texts the judge reads for each claim, the most similar past the "
        "prefilter",
    )
