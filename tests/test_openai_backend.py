"""The openai backend against a real HTTP server on 127.0.0.1 that speaks the API."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from openai import AsyncOpenAI

from dagmca.errors import EndpointError
from dagmca.llm.base import Completion, LLMError, Request
from dagmca.llm.openai_backend import OpenAIBackend
from dagmca.llm.openai_call import make_client, read_completion
from dagmca.llm.retry import RetryableFault, RetryPolicy
from dagmca.prompts.schemas import TensionFlag

Script = Callable[[dict[str, Any], int], tuple[int, dict[str, Any]]]


def chat(content: str, finish: str = "stop") -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


class JSONHandler(BaseHTTPRequestHandler):
    """Quiet, and answers in JSON."""

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def server() -> Iterator[Callable[[Script], tuple[str, list[dict[str, Any]]]]]:
    servers: list[ThreadingHTTPServer] = []

    def start(script: Script) -> tuple[str, list[dict[str, Any]]]:
        seen: list[dict[str, Any]] = []

        class Handler(JSONHandler):
            def do_GET(self) -> None:
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": [{"id": "m", "object": "model", "created": 0, "owned_by": "t"}],
                    },
                )

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                seen.append(body)
                status, reply = script(body, len(seen))
                self._send(status, reply)

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}/v1", seen

    yield start
    for s in servers:
        s.shutdown()


FAST = RetryPolicy(attempts=3, base_s=0.01, max_s=0.02)


def backend(url: str, model: str = "m", policy: RetryPolicy = FAST) -> OpenAIBackend:
    return OpenAIBackend(
        AsyncOpenAI(base_url=url, api_key="sk-test", max_retries=0, timeout=5), model, policy=policy
    )


GOOD = {"category": "gap", "urgency": 0.6, "question": "Who pays?", "excerpt": "e", "rationale": "r"}


def test_structured_output_is_sent_as_json_schema_and_validated(server: Any) -> None:
    url, seen = server(lambda body, n: (200, chat(json.dumps({**GOOD, "urgency": 27186}))))
    done = asyncio.run(
        backend(url).complete(Request([{"role": "user", "content": "x"}], schema=TensionFlag, max_tokens=50))
    )
    assert seen[0]["response_format"]["type"] == "json_schema"
    assert seen[0]["max_tokens"] == 50
    assert done.parsed.urgency == 1.0  # clamped, not rejected
    assert done.usage.total == 15


def test_one_repair_retry_shows_the_model_its_error(server: Any) -> None:
    url, seen = server(lambda body, n: (200, chat("not json" if n == 1 else json.dumps(GOOD))))
    done = asyncio.run(
        backend(url).complete(Request([{"role": "user", "content": "x"}], schema=TensionFlag, max_tokens=50))
    )
    assert done.repaired and done.parsed.question == "Who pays?"
    assert len(seen) == 2 and "not valid JSON" in seen[1]["messages"][-1]["content"]


def test_invalid_twice_is_an_llm_error(server: Any) -> None:
    url, seen = server(lambda body, n: (200, chat('{"category": "nope"}')))
    with pytest.raises(LLMError):
        asyncio.run(
            backend(url).complete(
                Request([{"role": "user", "content": "x"}], schema=TensionFlag, max_tokens=50)
            )
        )
    assert len(seen) == 2


def test_truncated_json_is_salvaged_without_another_call(server: Any) -> None:
    cut = json.dumps(GOOD)[:-20]
    url, seen = server(lambda body, n: (200, chat(cut, finish="length")))
    done = asyncio.run(
        backend(url).complete(Request([{"role": "user", "content": "x"}], schema=TensionFlag, max_tokens=50))
    )
    assert len(seen) == 1 and done.parsed.question == "Who pays?"


def test_empty_choices_and_server_errors_are_retried_then_llm_errors(server: Any) -> None:
    url, seen = server(lambda body, n: (200, {**chat("x"), "choices": []}))
    with pytest.raises(LLMError, match="no choices") as empty:
        asyncio.run(backend(url).complete(Request([{"role": "user", "content": "x"}], max_tokens=5)))
    assert len(seen) == 3 and empty.value.faults == ["empty_choices"] * 3 and empty.value.retries == 2
    url, seen = server(
        lambda body, n: (500 if n < 3 else 200, {"error": {"message": "boom"}} if n < 3 else chat("ok"))
    )
    done = asyncio.run(backend(url).complete(Request([{"role": "user", "content": "x"}], max_tokens=5)))
    assert done.text == "ok" and done.retries == 2 and done.faults == ["server_error", "server_error"]


def test_client_errors_are_not_retried(server: Any) -> None:
    url, seen = server(lambda body, n: (400, {"error": {"message": "bad request"}}))
    with pytest.raises(LLMError, match="BadRequest"):
        asyncio.run(backend(url).complete(Request([{"role": "user", "content": "x"}], max_tokens=5)))
    assert len(seen) == 1


@pytest.mark.slow
def test_ping_checks_the_model_and_the_endpoint(server: Any) -> None:
    url, _ = server(lambda body, n: (200, chat("x")))
    asyncio.run(backend(url).ping())
    with pytest.raises(EndpointError, match="not served"):
        asyncio.run(backend(url, "other-model").ping())
    with pytest.raises(EndpointError, match="not usable"):
        asyncio.run(backend("http://127.0.0.1:9/v1").ping())


def test_the_reply_is_read_from_the_body_as_the_endpoint_sent_it(server: Any) -> None:
    """The reply is read as bytes, not through the SDK's model: the usage with its
    cached tokens, a null content, a missing usage, and bodies that are not completions
    (retried as malformed, then an error)."""
    cached = {**chat("hi", "length"), "usage": {"prompt_tokens": 9, "completion_tokens": 4,
                                                 "prompt_tokens_details": {"cached_tokens": 7}}}  # fmt: skip
    url, _ = server(lambda body, n: (200, cached))
    done = asyncio.run(backend(url).complete(Request([{"role": "user", "content": "x"}], max_tokens=5)))
    assert (done.text, done.finish_reason) == ("hi", "length")
    assert (done.usage.prompt_tokens, done.usage.completion_tokens, done.usage.cached_tokens) == (9, 4, 7)
    bare = {"choices": [{"message": {"role": "assistant", "content": None}}]}
    url, _ = server(lambda body, n: (200, bare))
    done = asyncio.run(backend(url).complete(Request([{"role": "user", "content": "x"}], max_tokens=5)))
    assert (done.text, done.finish_reason, done.usage.total) == ("", "", 0)
    for odd in ({"object": "list", "data": []}, {"choices": [{"message": {"content": ["a", "b"]}}]}):
        url, seen = server(lambda body, n, odd=odd: (200, odd))  # type: ignore[misc]
        with pytest.raises(LLMError, match="gave up after 3 tries") as failed:
            asyncio.run(backend(url).complete(Request([{"role": "user", "content": "x"}], max_tokens=5)))
        assert len(seen) == 3 and failed.value.faults == ["malformed_body"] * 3


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        (b"<html>busy</html>", "malformed_body"),
        (b"[1, 2]", "malformed_body"),
        (b'{"choices": []}', "empty_choices"),
    ],
)
def test_a_body_that_is_no_completion_is_a_retryable_fault(raw: bytes, kind: str) -> None:
    with pytest.raises(RetryableFault) as fault:
        read_completion(raw)
    assert fault.value.kind == kind


def test_usage_counts_that_are_not_counts_read_as_zero() -> None:
    usage = {"prompt_tokens": -3, "completion_tokens": True, "prompt_tokens_details": None}
    raw = {"choices": [{"message": {"content": "x"}, "finish_reason": None}], "usage": usage}
    text, finish, read = read_completion(json.dumps(raw).encode())
    assert (text, finish) == ("x", "")
    assert (read.prompt_tokens, read.completion_tokens, read.cached_tokens) == (0, 0, 0)


def _slow_models_server(
    served: str, probe: tuple[int, dict[str, Any]]
) -> tuple[ThreadingHTTPServer, dict[str, Any]]:
    """A server whose model list is answered only once a chat request has come in (or
    after 3 s): it shows whether the pre-flight's two requests went out together."""
    state: dict[str, Any] = {"probe": threading.Event(), "overlapped": None}

    class Handler(JSONHandler):
        def do_GET(self) -> None:
            state["overlapped"] = state["probe"].wait(3.0)
            listed = [{"id": served, "object": "model", "created": 0, "owned_by": "t"}]
            self._send(200, {"object": "list", "data": listed})

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            state["probe"].set()
            self._send(*probe)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, state


def test_the_negotiation_goes_out_beside_the_model_check() -> None:
    httpd, state = _slow_models_server("m", (200, chat(json.dumps({"answer": "yes", "reason": "It is."}))))
    try:
        b = backend(f"http://127.0.0.1:{httpd.server_address[1]}/v1")
        asyncio.run(b.ping())
    finally:
        httpd.shutdown()
    assert state["overlapped"] is True  # a probe arrived while the model list was pending
    assert b.negotiated


def test_a_model_not_served_is_the_error_reported_whatever_the_probes_met() -> None:
    # the probes fail (the endpoint does not know the model) while the list is pending:
    # the user is told about the model, not about JSON modes
    missing = (404, {"error": {"message": "model 'm' not found"}})
    httpd, _ = _slow_models_server("other", missing)
    try:
        with pytest.raises(EndpointError, match="not served"):
            asyncio.run(backend(f"http://127.0.0.1:{httpd.server_address[1]}/v1").ping())
    finally:
        httpd.shutdown()


def test_a_client_dagmca_builds_sends_through_the_sdk_and_its_faults_are_classified(server: Any) -> None:
    """The client `make_client` builds (the SDK's aiohttp client) sends its chat bodies
    through `chat.completions`; its status errors, a refused request and a dropped
    connection are classified, and the key goes out as the bearer."""

    def ask(url: str) -> Completion:
        async def go() -> Completion:
            client = make_client(url, "sk-ours", 5)
            try:
                return await OpenAIBackend(client, "m", policy=FAST).complete(
                    Request([{"role": "user", "content": "x"}], max_tokens=5)
                )
            finally:
                await client.close()  # and with it the aiohttp session

        return asyncio.run(go())

    auth: list[str | None] = []
    url, seen = server(lambda body, n: (500, {"error": {"message": "boom"}}) if n == 1 else (200, chat("ok")))
    done = ask(url)
    assert done.text == "ok" and done.faults == ["server_error"] and done.usage.total == 15
    assert seen[1]["messages"] == [{"role": "user", "content": "x"}] and seen[1]["max_tokens"] == 5

    url, seen = server(lambda body, n: (400, {"error": {"message": "bad request"}}))
    with pytest.raises(LLMError, match="BadRequest"):
        ask(url)
    assert len(seen) == 1

    url, _ = server(
        lambda body, n: (429, {"error": {"message": "slow down"}}) if n == 1 else (200, chat("ok"))
    )
    done = ask(url)
    assert done.faults == ["rate_limited"]

    with pytest.raises(LLMError) as down:  # nothing listens there
        ask("http://127.0.0.1:9/v1")
    assert down.value.faults == ["disconnect"] * 3

    class Bearer(JSONHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            auth.append(self.headers.get("Authorization"))
            self._send(200, chat("ok"))

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Bearer)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        ask(f"http://127.0.0.1:{httpd.server_address[1]}/v1")
    finally:
        httpd.shutdown()
    assert auth == ["Bearer sk-ours"]


def test_a_client_behind_a_proxy_sends_through_it_and_a_redirect_is_followed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With HTTP_PROXY set, the client dagmca builds sends its chat bodies through the
    proxy, and a 307 from the endpoint is followed: both the SDK's own handling."""
    seen: list[str] = []

    class Endpoint(JSONHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            seen.append(self.path)
            if self.path.endswith("/v1/chat/completions"):
                self.send_response(307)
                self.send_header("Location", self.path.replace("/v1/", "/v2/"))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self._send(200, chat("ok"))

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    port = httpd.server_address[1]

    def ask(url: str) -> str:
        async def go() -> str:
            client = make_client(url, "sk-ours", 5)
            try:
                done = await OpenAIBackend(client, "m", policy=FAST).complete(
                    Request([{"role": "user", "content": "x"}], max_tokens=5)
                )
                return done.text
            finally:
                await client.close()

        return asyncio.run(go())

    try:
        assert ask(f"http://127.0.0.1:{port}/v1") == "ok"
        assert seen == ["/v1/chat/completions", "/v2/chat/completions"]
        seen.clear()
        # the proxy is the same server: a request sent through it names the whole URL
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        assert ask("http://endpoint.example:8000/v1") == "ok"
        assert seen[0] == "http://endpoint.example:8000/v1/chat/completions"
    finally:
        httpd.shutdown()
