"""A response cache in a dict, for tests of the LLM stack's cache layer."""

from __future__ import annotations


class DictCache:
    def __init__(self) -> None:
        self.kept: dict[str, str] = {}

    async def acache_get(self, key: str) -> str | None:
        return self.kept.get(key)

    def cache_put(self, key: str, model: str, value: str) -> None:
        self.kept.setdefault(key, value)
