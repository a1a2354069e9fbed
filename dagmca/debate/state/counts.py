"""What a session counts as it runs, for its problems and its record."""

from __future__ import annotations

from dataclasses import dataclass, field

from dagmca.similarity.counts import EmbedCounts


@dataclass(eq=False)
class Counts:
    # observers' calls and the ones that failed: all failing is a problem worth an exit code
    flag_calls: int = 0
    flag_failures: int = 0
    revisits_used: int = 0
    dropped_tensions: int = 0  # observers' questions that looped or restated the instructions
    # this run's texts embedded, cache hits and embed-waits (the embedder may be shared)
    embed_counts: EmbedCounts = field(default_factory=EmbedCounts)
