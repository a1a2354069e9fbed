"""The event loop a session runs on, and texts encoded ahead of the reports that read them."""

from __future__ import annotations

import asyncio
import importlib.util

import pytest

from dagmca import aio
from dagmca.similarity import HashingEmbedder


@pytest.mark.skipif(importlib.util.find_spec("uvloop") is None, reason="uvloop does not install here")
def test_a_session_runs_on_uvloop_where_it_installs() -> None:
    async def which() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert aio.run(which()).startswith("uvloop")


def test_prefetched_texts_are_encoded_with_nobody_waiting() -> None:
    emb = HashingEmbedder()
    encoded: list[list[str]] = []
    inner = emb._encode
    emb._encode = lambda texts: encoded.append(texts) or inner(texts)  # type: ignore[method-assign]
    texts = ["shade and storm water", "who pays for the trees"]
    emb.prefetch(texts)
    emb.prefetch(texts[:1])  # asked twice: encoded once
    emb.close()  # waits for the thread's queue
    assert sorted(t for batch in encoded for t in batch) == texts
    before = len(encoded)
    emb.embed(["who pays for the trees"])  # a report's later read: from the cache
    assert len(encoded) == before
