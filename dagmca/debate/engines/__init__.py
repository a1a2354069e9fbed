"""The debate protocols a session can run (`--protocol`): `engine.py` holds
what they share, each other module one protocol; this registry names them."""

from __future__ import annotations

from typing import Any

from dagmca.debate.engines.decompose import DecomposeEngine
from dagmca.debate.engines.engine import Engine
from dagmca.debate.engines.mca import MCAEngine
from dagmca.debate.engines.vote import EnsembleEngine, VoteEngine

ENGINES: dict[str, type[Engine[Any]]] = {
    "mca": MCAEngine,
    "decompose": DecomposeEngine,
    "vote": VoteEngine,
    "ensemble": EnsembleEngine,
}
