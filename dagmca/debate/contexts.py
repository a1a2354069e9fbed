"""Agents as contexts: each agent of the pool (a perspective) keeps a
bounded buffer of its contributions that survived, and sees them in later prompts.

Survival: after a debate, each specialist's last contribution is compared with the
debate's resolution (embedding cosine). It survived when the cosine reaches
`success_threshold` and is at least the team's median: relative as well as absolute,
because a small model makes every text alike. The resolution is what syntheses and
the final integration are built from, so surviving into it is surviving into them.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, deque

from dagmca.similarity import Embedder
from dagmca.similarity.counts import EmbedPhase


def persona_id(perspective: str) -> str:
    """The id of the persistent agent of a perspective (a Persona node, in no session)."""
    return f"agent/{slug(perspective)}"


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "agent"


class AgentContexts:
    def __init__(self, size: int) -> None:
        self.size = size
        self.buffers: dict[str, deque[str]] = {}
        self.survivals: Counter[str] = Counter()  # contributions that survived, this session

    def seed(self, agent: str, kept: list[str]) -> None:
        """Start `agent` with what it kept before (a persistent agent's memory)."""
        if self.size and kept:
            self.buffers[agent] = deque(kept[-self.size :], maxlen=self.size)

    def kept(self, agent: str) -> list[str]:
        return list(self.buffers.get(agent, ()))

    def snapshot(self) -> dict[str, list[str]]:
        """Every agent's buffer as it is now: what a debate starting now keeps seeing
        while later credits change the buffers."""
        return {agent: list(buffer) for agent, buffer in self.buffers.items()}

    async def credit(
        self, contributions: dict[str, str], resolution: str, embedder: Embedder, threshold: float
    ) -> dict[str, bool]:
        """Which agents' contributions survived into `resolution`; the survivors' go into
        their buffers (first in, first out)."""
        if not contributions or not resolution:
            return {}
        said = list(contributions.values())
        found = await embedder.asimilarities(resolution, said, phase=EmbedPhase.CREDIT)
        sims = {a: float(s) for a, s in zip(contributions, found, strict=True)}
        median = statistics.median(sims.values())
        survived = {a: s >= threshold and s >= median for a, s in sims.items()}
        self.survivals.update(a for a, ok in survived.items() if ok)
        if self.size:
            for agent, ok in survived.items():
                if ok:
                    self.buffers.setdefault(agent, deque(maxlen=self.size)).append(contributions[agent])
        return survived
