"""Sessions by id: a new session's id, where its reports go, the settings a stored
session ran with, and what a run given a stored session's id must agree with before it
continues that session."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from dagmca.config import SessionConfig
from dagmca.errors import UserError
from dagmca.graph import NodeRecord, SessionStatus
from dagmca.store import DEFAULT_STORE
from dagmca.store.target import is_bolt_uri
from dagmca.workspace.inputs import BUDGETS

# settings that change how a run is carried out but no answer in it: an existing
# session is continued whatever they are, with the values given now
RUNTIME = frozenset(
    {
        "concurrency",
        "rpm",
        "tpm",
        "request_timeout_s",
        "max_retries",
        "endpoint_down_after",
        "cache",
        "otel",
        "otel_content",
        "max_passage_bytes",
        "price_per_1k_prompt",
        "price_per_1k_completion",
        *BUDGETS,
    }
)


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


def continues(node: NodeRecord, cfg: SessionConfig, asked: tuple[str, str | None], location: str) -> None:
    """A run given an existing session's id continues that session only when these
    settings made it from this input, and it is not done; else refused, saying what differs."""
    found = (str(node.props.get("passage", "")), str(node.props.get("question") or "") or None)
    said = differences(stored_config(node), cfg, found, asked)
    if said:
        raise UserError(
            f"session {node.id} already exists in {location} with other settings: {'; '.join(said)}",
            f"`dagmca resume {node.id}` continues it with its own settings, or choose another id",
        )
    if not SessionStatus.of(node).continuable():
        raise UserError(f"session {node.id} already exists in {location} and is done", "choose another id")


def differences(
    stored: SessionConfig,
    given: SessionConfig,
    found: tuple[str, str | None],
    asked: tuple[str, str | None],
) -> list[str]:
    """What a run given `given` on (passage, question) `asked` would do otherwise than
    the session that ran `stored` on `found`: each difference as `name: here, there`."""
    said = []
    if found[0] != asked[0]:
        said.append("the passage")
    if (found[1] or None) != (asked[1] or None):
        said.append("the question")
    mine, theirs = given.model_dump(mode="json"), stored.model_dump(mode="json")
    for name in SessionConfig.model_fields:
        if name not in RUNTIME and mine.get(name) != theirs.get(name):
            said.append(f"{name} {_short(mine.get(name))} (the session's: {_short(theirs.get(name))})")
    return said


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
