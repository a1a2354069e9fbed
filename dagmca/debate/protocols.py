"""The debate protocols a session can run (`--protocol`, DESIGN §2)."""

from __future__ import annotations

from dagmca.debate.decompose import DecomposeEngine
from dagmca.debate.engine import Engine
from dagmca.debate.mca import MCAEngine
from dagmca.debate.vote import EnsembleEngine, VoteEngine

ENGINES: dict[str, type[Engine]] = {
    "mca": MCAEngine,
    "decompose": DecomposeEngine,
    "vote": VoteEngine,
    "ensemble": EnsembleEngine,
}
