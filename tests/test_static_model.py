"""The default embedder's table ships in the package: it is what its config says, it is
a fresh distillation of the bundled all-MiniLM-L6-v2 to within its int8 rounding, and
the rounding keeps every row, however short."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from dagmca.similarity.bundled import bundled_model
from dagmca.similarity.distill import PCA_DIMS, SIF, table, vocabulary
from dagmca.similarity.static import MAX_TOKENS, SHIPPED, StaticEmbedder, dequantize, digest, quantize

TEXTS = [
    "Who bears the cost of the street trees, and who gains?",
    "Who pays for planting street trees, and who benefits?",
    "The four-day week keeps output steady where work is measured by results.",
    "Shift-based services mostly move the same hours around the week.",
    "The committee approved the railway timetable for the winter season.",
    "Free will may be compatible with a fully determined world.",
    "If every choice has a prior cause, can anyone be blamed for it?",
]


def shipped() -> dict[str, np.ndarray]:
    return load_file(str(SHIPPED / "model.safetensors"))


def test_the_shipped_table_is_what_its_config_says() -> None:
    tensors = shipped()
    config = json.loads((SHIPPED / "config.json").read_text(encoding="utf-8"))
    vocab = json.loads((SHIPPED / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    rows, scales = tensors["embeddings"], tensors["scales"]
    assert rows.dtype == np.int8 and scales.dtype == np.float32
    assert rows.shape == (len(vocab), PCA_DIMS) and scales.shape == (len(vocab),)
    assert sorted(vocab.values()) == list(range(len(vocab)))
    assert config["digest"] == digest(tensors)  # the name its vectors are kept under
    made = (config["pca_dims"], config["sif_coefficient"], config["max_length"])
    assert made == (PCA_DIMS, SIF, MAX_TOKENS)
    assert np.abs(rows).max() == 127 and (scales > 0).all()  # each row uses its whole range


def test_quantizing_keeps_each_row_within_half_a_step() -> None:
    rng = np.random.default_rng(0)
    # rows whose norms span five orders of magnitude, as the frequency weights make them
    original = rng.normal(size=(64, 256)) * np.logspace(-4, 1, 64)[:, None]
    original[3] = 0.0
    tensors = quantize(original)
    back = dequantize(tensors)
    step = tensors["scales"].astype(np.float64)[:, None]
    assert (np.abs(back - original) <= step / 2 + 1e-6 * np.abs(original)).all()
    assert not back[3].any()  # a zero row stays zero
    relative = np.linalg.norm(back - original, axis=1) / np.maximum(np.linalg.norm(original, axis=1), 1e-30)
    assert relative[original.any(axis=1)].max() < 0.02  # the shortest rows too


@pytest.mark.slow
def test_the_shipped_table_is_a_fresh_distillation_of_the_bundled_model(tmp_path: Path) -> None:
    """Distils all of MiniLM's vocabulary again (a minute or two of CPU) and holds the
    shipped table to it: the same tokens in the same order, every value within one int8
    step (rounding is half a step; the rest is room for another machine's arithmetic),
    and the same similarities between sentences."""
    fresh = table(bundled_model())
    tensors = shipped()
    vocab = json.loads((SHIPPED / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    assert list(vocab) == list(vocabulary(bundled_model()))
    assert fresh.shape == tensors["embeddings"].shape
    steps = np.abs(dequantize(tensors) - fresh) / tensors["scales"][:, None]
    assert steps.max() <= 1.0, f"{(steps > 1).sum()} values more than one step away (worst {steps.max():.2f})"
    # the sentence vectors of the fresh float table against the shipped one's
    folder = tmp_path / "fresh"
    folder.mkdir()
    shutil.copy(SHIPPED / "tokenizer.json", folder / "tokenizer.json")
    (folder / "config.json").write_text(json.dumps({"max_length": MAX_TOKENS}), encoding="utf-8")
    save_file({"embeddings": fresh.astype(np.float32)}, str(folder / "model.safetensors"))
    ours, theirs = StaticEmbedder(), StaticEmbedder(folder)
    try:
        a, b = ours.embed(TEXTS), theirs.embed(TEXTS)
    finally:
        ours.close()
        theirs.close()
    assert np.abs(a @ a.T - b @ b.T).max() < 0.005
