"""A static embedder distilled on this machine from the bundled all-MiniLM-L6-v2.

Every token of MiniLM's own WordPiece vocabulary goes through the model once, alone
between [CLS] and [SEP]; the token vectors are reduced with PCA and weighted by an
estimated frequency (SIF), as model2vec distils a model; a text's vector is then the mean
of its tokens' rows: a table lookup, no transformer at run time. The distillation runs
once into the user's data folder, on dagmca's own torch forward pass over the wheel's
files, so nothing is fetched and nothing beyond the base packages is needed.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, cast

import numpy as np

from dagmca.similarity import Embedder
from dagmca.similarity.onnx import bundled_model, derived_path

PCA_DIMS = 256  # model2vec's default: the rows past it add little but memory
MAX_TOKENS = 512  # model2vec's own cut, when the folder's config names none
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


def distill(source: Path, dest: Path, limit: int | None = None) -> Path:
    """Distil the sentence model in `source` into a static model folder at `dest`
    (atomically: a concurrent run sees no folder or the whole of it); `limit` keeps only
    the vocabulary's first tokens (tests)."""
    from safetensors.numpy import save_file

    from dagmca.similarity.minilm import MiniLM

    kept = list(vocabulary(source).items())[:limit]
    vectors = MiniLM(source).token_vectors([i for _, i in kept])
    table = reduce(np.nan_to_num(vectors)) * sif_weights(len(kept))[:, None]
    tokenizer: dict[str, Any] = json.loads((source / "tokenizer.json").read_text(encoding="utf-8"))
    renumbered = {t: n for n, (t, _) in enumerate(kept)}
    tokenizer["model"]["vocab"] = renumbered
    tokenizer["added_tokens"] = [
        {**a, "id": renumbered[a["content"]]} for a in tokenizer["added_tokens"] if a["content"] in renumbered
    ]
    # the table is read without special tokens, padding or the model's 128-token cut
    tokenizer.update(post_processor=None, padding=None, truncation=None)
    config = {
        "hidden_dim": table.shape[1],
        "pca_dims": PCA_DIMS,
        "sif_coefficient": SIF,
        "max_length": MAX_TOKENS,
    }
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        folder = Path(tmp) / "model"
        folder.mkdir()
        save_file({"embeddings": table.astype(np.float16)}, str(folder / "model.safetensors"))
        (folder / "tokenizer.json").write_text(json.dumps(tokenizer, ensure_ascii=False), encoding="utf-8")
        (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
        if not dest.exists():
            os.replace(folder, dest)
    return dest


class StaticEmbedder(Embedder):
    """Token vectors averaged: the table distilled from MiniLM."""

    name = "all-MiniLM-L6-v2-static"

    def __init__(self, folder: Path | None = None) -> None:
        super().__init__()
        self._folder = folder  # a table made elsewhere (tests); else the distilled one
        self._table: np.ndarray | None = None
        self._tokenizer: Any = None
        self._unknown: int | None = None

    def path(self) -> Path:
        if self._folder is not None:
            return self._folder
        return derived_path(f"minilm-static-{PCA_DIMS}-v2", bundled_model())

    def ensure(self) -> Path:
        """The distilled model's folder, distilled now when absent."""
        target = self.path()
        if not target.exists():
            distill(bundled_model(), target)
        return target

    def _prepare(self) -> None:
        if self._table is not None:
            return
        # tokenizers would encode a batch on a thread per core, beside the local LLM server
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = self.ensure()
        # the table, and the tokenizer without special tokens, cut at the folder's max_length
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.enable_truncation(int(config.get("max_length") or MAX_TOKENS))
        tokenizer.no_padding()
        self._unknown = tokenizer.token_to_id("[UNK]")
        self._table = load_file(str(folder / "model.safetensors"))["embeddings"].astype(np.float32)
        self._tokenizer = tokenizer

    def _encode(self, texts: list[str]) -> np.ndarray:
        assert self._table is not None  # _prepare ran
        out = np.zeros((len(texts), self._table.shape[1]), dtype=np.float32)
        for row, found in enumerate(self._tokenizer.encode_batch(texts, add_special_tokens=False)):
            ids = [i for i in found.ids if i != self._unknown]
            if ids:
                out[row] = self._table[ids].mean(axis=0)
        # a text of no known token keeps a zero vector: similar to nothing
        return cast(np.ndarray, out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12))
