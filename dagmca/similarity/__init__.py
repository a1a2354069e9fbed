"""Similarity: sentence embeddings (derived from all-MiniLM-L6-v2) and Jaccard.

The embedder's base is `embedder.py`; each embedder is a module of its own (`minilm.py`,
`static.py`, `onnx.py`, `hashing.py`), `choose.py` picks one by name, and `lexical.py`
holds the word overlap. The names below are the package's public ones.
"""

from __future__ import annotations

from dagmca.similarity.embedder import PIECE_WORDS, Embedder, VectorStore, pieces
from dagmca.similarity.hashing import HashingEmbedder
from dagmca.similarity.lexical import jaccard, words
from dagmca.similarity.minilm import MiniLMEmbedder

__all__ = [
    "PIECE_WORDS",
    "Embedder",
    "HashingEmbedder",
    "MiniLMEmbedder",
    "VectorStore",
    "jaccard",
    "pieces",
    "words",
]
