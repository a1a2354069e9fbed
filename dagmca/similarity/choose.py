"""The embedder a run uses, by the name of its setting (`--embedder`)."""

from __future__ import annotations

import os
from enum import StrEnum

from dagmca.errors import SettingsError
from dagmca.similarity.embedder import Embedder
from dagmca.similarity.minilm import MiniLMEmbedder


class EmbedderName(StrEnum):
    """The selectable embedders: all-MiniLM-L6-v2 in torch, on onnxruntime (fp32 or int8),
    or the static table distilled from it (the default, shipped in the package; the
    others need the `minilm` or `onnx` extra)."""

    MINILM = "minilm"
    MINILM_ONNX = "minilm-onnx"
    MINILM_ONNX_INT8 = "minilm-onnx-int8"
    STATIC = "static"


# the cheapest by far at equal prefilter recall on the labelled sets, once recalibrated
# (docs/concepts/embeddings.md, scripts/bench_embedders.py)
DEFAULT = EmbedderName.STATIC


def make_embedder(name: str | EmbedderName | None = None) -> Embedder:
    """A new embedder of that name (None: $DAGMCA_EMBEDDER, else the default);
    `SettingsError` naming the choices for any other."""
    if name is None:
        name = os.environ.get("DAGMCA_EMBEDDER") or DEFAULT
    try:
        chosen = EmbedderName(name)
    except ValueError:
        choices = ", ".join(e.value for e in EmbedderName)
        raise SettingsError(f"unknown embedder {str(name)!r}: choose one of {choices}") from None
    if chosen is EmbedderName.MINILM:
        return MiniLMEmbedder()
    if chosen is EmbedderName.STATIC:
        from dagmca.similarity.static import StaticEmbedder

        return StaticEmbedder()
    from dagmca.similarity.onnx import OnnxMiniLMEmbedder

    return OnnxMiniLMEmbedder(quantized=chosen is EmbedderName.MINILM_ONNX_INT8)


def prepare(names: list[str] | None = None) -> list[str]:
    """Derive now what the named embedders (None: all) load, where it is missing (the
    ONNX graphs; the static table ships made). The paths, in order."""
    done = []
    for name in names or [e.value for e in EmbedderName]:
        embedder = make_embedder(name)
        ensure = getattr(embedder, "ensure", None)
        if ensure is not None:
            done.append(str(ensure()))
    return done


if __name__ == "__main__":  # python -m dagmca.similarity.choose [NAME ...]
    import sys

    for path in prepare(sys.argv[1:] or None):
        print(path)
