"""The chat body dagmca posts through the client's `post` is the one the SDK's
`chat.completions.create` sends for the same request, to a real HTTP server on
127.0.0.1: plain and structured in every mode, a reasoning model's parameters, and a
server's own sampling keys (the SDK's `extra_body`)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from dagmca.llm.base import Request
from dagmca.llm.openai_backend import OpenAIBackend
from dagmca.llm.openai_call import make_client
from dagmca.llm.structured import MODES, StructuredMode
from dagmca.prompts.schemas import TensionFlag, joint_flag_schema
from tests.support.fault_server import FaultServer

MESSAGES = [
    {"role": "system", "content": "You observe a debate on congestion pricing."},
    {"role": "user", "content": "Turn 1: the charge moves traffic to poorer streets. Flag a tension."},
]
SAMPLING = {"top_k": 40, "repeat_penalty": 1.1, "min_p": 0.05}


def sent(model: str, mode: StructuredMode, schema: Any, sampling: dict[str, float]) -> list[dict[str, Any]]:
    """What the server received: the request as the backend posts it, then the same
    request through `chat.completions.create`."""
    bodies: list[dict[str, Any]] = []

    async def go() -> None:
        with FaultServer(on_request=bodies.append) as server:
            client = make_client(server.base_url, "sk-test", 10)
            try:
                backend = OpenAIBackend(
                    client, model, structured=mode, reasoning_effort="low", sampling=sampling
                )
                await backend.complete(Request(MESSAGES, schema=schema, max_tokens=300, seed=7))
                posted = dict(bodies[0])
                api = {k: v for k, v in posted.items() if k not in sampling}
                await client.chat.completions.create(**api, extra_body=dict(sampling))
            finally:
                await client.close()

    asyncio.run(go())
    return bodies


@pytest.mark.parametrize("mode", MODES)
def test_a_structured_body_is_the_one_the_sdk_sends(mode: StructuredMode) -> None:
    schema = joint_flag_schema(("assumptions", "evidence"), 2) if mode is MODES[0] else TensionFlag
    posted, through_sdk = sent("m", mode, schema, SAMPLING)
    assert posted == through_sdk
    assert {"top_k", "repeat_penalty", "min_p", "max_tokens", "temperature", "seed"} <= set(posted)


def test_a_plain_body_and_a_reasoning_models_are_the_ones_the_sdk_sends() -> None:
    posted, through_sdk = sent("m", StructuredMode.STRICT, None, {})
    assert posted == through_sdk and "response_format" not in posted
    posted, through_sdk = sent("o3-mini", StructuredMode.STRICT, TensionFlag, {})
    assert posted == through_sdk
    assert posted["max_completion_tokens"] == 300 and posted["reasoning_effort"] == "low"
    assert "temperature" not in posted and "max_tokens" not in posted
