"""An embedder for tests: bag-of-words hashed into a fixed space."""

from __future__ import annotations

import zlib

import numpy as np

from dagmca.similarity.embedder import Embedder
from dagmca.similarity.lexical import words


class HashingEmbedder(Embedder):
    """Bag-of-words hashed into a fixed space: deterministic and instant, for tests.

    Texts sharing words are similar; texts sharing none are orthogonal.
    """

    encodes_inline = True

    def __init__(self, dims: int = 512) -> None:
        super().__init__()
        self.dims = dims
        self.name = f"hashing-{dims}"

    def _encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for i, text in enumerate(texts):
            for w in words(text):
                out[i, zlib.crc32(w.encode()) % self.dims] += 1.0
            norm = np.linalg.norm(out[i])
            if norm:
                out[i] /= norm
        return out
