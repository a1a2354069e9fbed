"""The default embedder: a static table of token vectors distilled from all-MiniLM-L6-v2,
shipped in the package (similarity/static_model/). A text's vector is the mean of its
tokens' rows: a table lookup, no transformer at run time, and nothing beyond numpy,
`tokenizers` and `safetensors` to load it.

The table is stored as int8 with one scale per row (`quantize`); it is made from the
bundled MiniLM by similarity/distill.py (scripts/make_static_model.py), and a test holds
the shipped table to a fresh distillation.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, cast

import numpy as np

from dagmca.errors import UserError
from dagmca.similarity.embedder import Embedder

SHIPPED = Path(__file__).with_name("static_model")
MAX_TOKENS = 512  # model2vec's own cut, when the folder's config names none
NAME = "all-MiniLM-L6-v2-static"


def quantize(table: np.ndarray) -> dict[str, np.ndarray]:
    """The table as int8 rows, each with its own float32 scale (its largest magnitude over
    127): half the bytes of float16. A scale per row, not one for the table: the rows'
    frequency weights make their norms differ by orders of magnitude, and one scale
    would round the frequent tokens' short rows to nothing."""
    scales = np.abs(table).max(axis=1) / 127.0
    safe = np.where(scales > 0, scales, 1.0)
    rows = np.clip(np.rint(table / safe[:, None]), -127, 127).astype(np.int8)
    return {"embeddings": rows, "scales": scales.astype(np.float32)}


def dequantize(tensors: dict[str, np.ndarray]) -> np.ndarray:
    """The table in float32, from the int8 rows and their scales (or a float table as it is)."""
    table = tensors["embeddings"].astype(np.float32)
    if "scales" in tensors:
        table *= tensors["scales"].astype(np.float32)[:, None]
    return table


def digest(tensors: dict[str, np.ndarray]) -> str:
    """What the table's vectors are keyed on: a new table never reuses a kept vector."""
    found = hashlib.sha256()
    for key in sorted(tensors):
        found.update(key.encode())
        found.update(np.ascontiguousarray(tensors[key]).tobytes())
    return found.hexdigest()


def read_config(folder: Path) -> dict[str, Any]:
    path = folder / "config.json"
    return cast(dict[str, Any], json.loads(path.read_text(encoding="utf-8"))) if path.exists() else {}


class StaticEmbedder(Embedder):
    """Token vectors averaged: the table distilled from MiniLM (the shipped one, or the
    model folder given)."""

    encodes_inline = True  # the mean of a few table rows

    def __init__(self, folder: Path | None = None) -> None:
        super().__init__()
        self._folder = folder or SHIPPED
        # a table of another digest is another embedder: its vectors are kept apart
        made = read_config(self._folder).get("digest")
        self.name = f"{NAME}-{str(made)[:12]}" if made else NAME
        self._table: np.ndarray | None = None
        self._tokenizer: Any = None
        self._unknown: int | None = None

    def path(self) -> Path:
        return self._folder

    def ensure(self) -> Path:
        """The model's folder (nothing to derive: the table ships made)."""
        if not (self._folder / "model.safetensors").exists():
            raise UserError(
                f"the default embedder's table is missing from {self._folder}",
                "reinstall dagmca (the table ships in its package)",
            )
        return self._folder

    def _prepare(self) -> None:
        if self._table is not None:
            return
        # tokenizers would encode a batch on a thread per core, beside the local LLM server
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        folder = self.ensure()
        # the table, and the tokenizer without special tokens, cut at the folder's max_length
        config = read_config(folder)
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.enable_truncation(int(config.get("max_length") or MAX_TOKENS))
        tokenizer.no_padding()
        self._unknown = tokenizer.token_to_id("[UNK]")
        self._table = dequantize(load_file(str(folder / "model.safetensors")))
        self._tokenizer = tokenizer

    def _loaded(self) -> bool:
        return self._tokenizer is not None  # set last, after the table

    def _encode(self, texts: list[str]) -> np.ndarray:
        assert self._table is not None  # _prepare ran
        out = np.zeros((len(texts), self._table.shape[1]), dtype=np.float32)
        for row, found in enumerate(self._tokenizer.encode_batch_fast(texts, add_special_tokens=False)):
            ids = [i for i in found.ids if i != self._unknown]
            if ids:
                out[row] = self._table[ids].mean(axis=0)
        # a text of no known token keeps a zero vector: similar to nothing
        return cast(np.ndarray, out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12))
