"""Sessions by id: a new session's id, where its reports go, and the settings a stored
session ran with."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from dagmca.config import SessionConfig
from dagmca.errors import UserError
from dagmca.graph import NodeRecord
from dagmca.store import DEFAULT_STORE
from dagmca.store.target import is_bolt_uri


def reports_dir(location: str, session: str, out_dir: Path | None) -> Path:
    """--out, else sessions/<id>/ beside the embedded store (under .dagmca/ for Neo4j)."""
    root = DEFAULT_STORE.parent if is_bolt_uri(location) else Path(location).parent
    return out_dir or root / "sessions" / session


def new_session_id(text: str) -> str:
    """The time, the text's hash and a random part: two runs of one text started in the
    same second get two ids (and a clash of ids is refused under the session's lease)."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-")
    return stamp + hashlib.sha256(text.encode()).hexdigest()[:6] + "-" + secrets.token_hex(2)


def stored_config(node: NodeRecord) -> SessionConfig:
    """The settings a session ran with, as its Session node keeps them."""
    try:
        return SessionConfig.model_validate_json(str(node.props["config"]))
    except (KeyError, ValidationError) as exc:
        raise UserError(f"session {node.id} has no usable settings: {exc}") from None
