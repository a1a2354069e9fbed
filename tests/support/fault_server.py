"""An OpenAI-compatible HTTP server on 127.0.0.1 that injects faults, for tests.

It serves `GET /v1/models` and `POST /v1/chat/completions`. A healthy reply is a
deterministic function of the request: text for plain calls, and for
`response_format` json_schema an instance of the schema. At configurable rates a
chat request instead gets one of FAULTS. It counts what it did, per fault kind and
per request key (the same key dagmca's response cache uses), so tests can check the
client's own accounting and that no finished call is asked twice.
"""

from __future__ import annotations

import hashlib
import json
import random
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from dagmca.llm.fake import checked_excerpt

FAULTS = (
    "rate_limit",  # 429 with Retry-After
    "server_500",
    "server_503",
    "hang",  # no reply for `hang_s` seconds, then the connection closes
    "drop",  # the connection closes without a reply
    "malformed",  # 200 with a body that is not JSON
    "bad_json",  # 200, but a structured reply's content is broken JSON
    "empty",  # 200 with no choices
    "truncate",  # 200, finish_reason "length", content cut in half
)
# What dagmca's call accounting calls each injected fault.
CLIENT_KIND = {
    "rate_limit": "rate_limited",
    "server_500": "server_error",
    "server_503": "server_error",
    "hang": "timeout",
    "drop": "disconnect",
    "malformed": "malformed_body",
    "bad_json": "invalid_json",
    "empty": "empty_choices",
    "truncate": "truncated",
}
WORDS = [
    *("fairness", "evidence", "harm", "memory", "power", "value", "trust", "risk", "law", "market"),
    *("scale", "duty", "freedom", "meaning", "culture", "attention", "feedback", "constraint"),
    *("language", "revenue", "workers", "buses", "suburbs", "councils"),
]


def request_key(body: dict[str, Any]) -> str:
    """The key dagmca.llm.cache.cache_key computes for the same request."""
    fmt = body.get("response_format") or {}
    schema = fmt.get("json_schema", {}).get("schema") if fmt.get("type") == "json_schema" else None
    request = {
        "model": body.get("model"),
        "messages": body.get("messages"),
        "schema": schema,
        "max_tokens": body.get("max_tokens", body.get("max_completion_tokens")),
        "temperature": body.get("temperature"),
        "seed": body.get("seed"),
    }
    return hashlib.sha256(json.dumps(request, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


SCHEMA_MARK = "```json\n"


def schema_in_prompt(body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON schema a request states at the end of its last message (the modes that
    cannot send it as response_format), if it does."""
    messages = body.get("messages") or []
    text = str(messages[-1].get("content", "")) if messages else ""
    start = text.rfind(SCHEMA_MARK)
    if "JSON schema" not in text or start < 0:
        return None
    try:
        schema = json.loads(text[start + len(SCHEMA_MARK) : text.rindex("```")].strip())
    except ValueError:
        return None
    return schema if isinstance(schema, dict) else None


def quoting(data: Any, body: dict[str, Any]) -> Any:
    """An instance whose observer excerpts quote the turn they flag, as a model's do (a
    flag whose excerpt is not in its turn is discarded)."""
    prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages") or [])
    if isinstance(data, list):
        return [quoting(item, body) for item in data]
    if not isinstance(data, dict):
        return data
    out = {k: quoting(v, body) for k, v in data.items()}
    if isinstance(out.get("excerpt"), str):
        turn = out.get("turn", 1)
        out["excerpt"] = checked_excerpt(prompt, turn if isinstance(turn, int) else 1) or out["excerpt"]
    return out


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def instance(schema: dict[str, Any], rng: random.Random, defs: dict[str, Any] | None = None) -> Any:
    """A valid instance of a JSON schema (the subset pydantic emits for our outputs)."""
    defs = defs if defs is not None else schema.get("$defs", {})
    if "$ref" in schema:
        return instance(defs[schema["$ref"].rsplit("/", 1)[-1]], rng, defs)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [s for s in schema[key] if s.get("type") != "null"]
            return instance(options[0], rng, defs)
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object":
        return {k: instance(v, rng, defs) for k, v in schema.get("properties", {}).items()}
    if kind == "array":
        return [instance(schema.get("items", {}), rng, defs)]
    if kind == "string":
        text = _words(rng, 7) + "?"
        return text[: schema.get("maxLength", len(text))]
    if kind == "number":
        return round(rng.uniform(0.5, 0.95), 2)
    if kind == "integer":
        return 1
    if kind == "boolean":
        return True
    return None


def most_in_window(times: list[float], window: float) -> int:
    """The most requests any `window` seconds held (each window starting at a request)."""
    times = sorted(times)
    best, j = 0, 0
    for i, start in enumerate(times):
        while j < len(times) and times[j] < start + window:
            j += 1
        best = max(best, j - i)
    return best


@dataclass
class FaultServer:
    rates: dict[str, float] = field(default_factory=dict)
    seed: int = 0
    retry_after: str = "0.2"
    hang_s: float = 3.0
    latency_s: float = 0.0
    # each chat request waits up to this much more, by a hash of its messages: calls
    # that differ in length as a real model's do, the same call the same each time
    latency_spread_s: float = 0.0
    models: tuple[str, ...] = ("fault-model",)
    # what structured output it supports: response_format types it accepts (others: 400);
    # `strict_keywords`: it rejects a strict schema with keywords strict mode does not take
    accepts: frozenset[str] = frozenset({"json_schema", "json_object"})
    strict_keywords: bool = False
    # a reasoning model's endpoint: max_tokens and temperature are refused (400)
    reasoning: bool = False
    # what a plain reply says (default: 14 words); what is done with every chat request
    text_reply: Callable[[dict[str, Any]], str] | None = None
    # fields a structured reply always gives these values, where its schema has them (a
    # test that needs `supported: yes` does not hang on which value the seed draws)
    fields: dict[str, Any] = field(default_factory=dict)
    on_request: Callable[[dict[str, Any]], None] | None = None
    # an endpoint's rate limit: a chat request beyond `rpm_limit` in the last 60 s gets a
    # 429 (with Retry-After), as a real endpoint answers
    rpm_limit: int | None = None
    # counters
    requests: int = 0
    gets: int = 0  # GET requests (the pre-flight's model list)
    waited_s: float = 0.0  # the latency given to chat requests, in all
    arrivals: list[float] = field(default_factory=list)  # monotonic time of each chat request
    over_limit: int = 0  # requests refused for the rate limit
    injected: Counter[str] = field(default_factory=Counter)
    served: Counter[str] = field(default_factory=Counter)  # healthy replies per request key
    authorizations: set[str] = field(default_factory=set)
    bodies: dict[str, dict[str, Any]] = field(default_factory=dict)  # request key -> last body
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _httpd: ThreadingHTTPServer | None = None

    def answering(self, data: Any) -> Any:
        if isinstance(data, dict):
            data.update({k: v for k, v in self.fields.items() if k in data})
        return data

    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> FaultServer:
        server = self
        rng = random.Random(self.seed)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # the headers and the body go out in two writes: with Nagle's algorithm the
            # second waits for the client's delayed ACK, 40 ms on every reply
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:  # quiet
                return

            def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                with server._lock:
                    server.gets += 1
                if self.path.rstrip("/").endswith("/models"):
                    data = [
                        {"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in server.models
                    ]
                    self._send(200, json.dumps({"object": "list", "data": data}).encode())
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {}
                if not body.get("messages"):  # e.g. a client killed while sending
                    return self._send(400, b'{"error": {"message": "no messages"}}')
                auth = self.headers.get("Authorization", "")
                if server.on_request is not None:
                    server.on_request(body)
                with server._lock:
                    server.requests += 1
                    server.authorizations.add(auth)
                    now = time.monotonic()
                    limited = server.rpm_limit is not None and (
                        sum(1 for t in server.arrivals if t > now - 60) >= server.rpm_limit
                    )
                    server.arrivals.append(now)
                    server.over_limit += limited
                    fault = next((f for f in FAULTS if rng.random() < server.rates.get(f, 0.0)), None)
                    fault = "rate_limit" if limited else fault
                    if fault is not None:
                        server.injected[fault] += 1
                wait = server.latency_s + server.spread(body)
                if wait:
                    with server._lock:
                        server.waited_s += wait
                    time.sleep(wait)
                refusal = server.refusal(body)
                if refusal:
                    return self._send(400, json.dumps({"error": {"message": refusal}}).encode())
                fmt_type = (body.get("response_format") or {}).get("type")
                structured = fmt_type == "json_schema"
                in_prompt = schema_in_prompt(body)
                # Echo the credentials in error bodies, as some real servers do: the
                # client must keep them out of everything it records.
                echo = json.dumps({"error": {"message": f"injected fault; you sent {auth}"}}).encode()
                if fault == "rate_limit":
                    return self._send(429, echo, {"Retry-After": server.retry_after})
                if fault == "server_500":
                    return self._send(500, echo)
                if fault == "server_503":
                    return self._send(503, echo)
                if fault == "hang":
                    time.sleep(server.hang_s)
                    self.close_connection = True
                    return None
                if fault == "drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return None
                if fault == "malformed":
                    return self._send(200, b'{"id": "chatcmpl-x", "choices": [ <html>oops')
                key = request_key(body)
                reply_rng = random.Random(key)
                if structured:
                    schema = body["response_format"]["json_schema"]["schema"]
                    content = json.dumps(quoting(server.answering(instance(schema, reply_rng)), body))
                elif in_prompt is not None:  # json_object, or text: JSON as a model writes it
                    content = json.dumps(quoting(server.answering(instance(in_prompt, reply_rng)), body))
                    if fmt_type != "json_object":
                        content = f"Here is the JSON you asked for:\n```json\n{content}\n```\nThat is all."
                elif server.text_reply is not None:
                    content = server.text_reply(body)
                else:
                    content = _words(reply_rng, 14) + "."
                finish = "stop"
                if fault == "bad_json" and (structured or in_prompt is not None):
                    content = content[: len(content) // 2] + '"}, ,'
                elif fault == "truncate":
                    content, finish = content[: len(content) // 2], "length"
                message = {"role": "assistant", "content": content}
                choices = (
                    [] if fault == "empty" else [{"index": 0, "message": message, "finish_reason": finish}]
                )
                prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
                reply = {
                    "id": "chatcmpl-" + key[:12],
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", ""),
                    "choices": choices,
                    "usage": {
                        "prompt_tokens": prompt_tokens,
                        "completion_tokens": len(content.split()),
                        "total_tokens": prompt_tokens + len(content.split()),
                    },
                }
                if fault is None:
                    with server._lock:
                        server.served[key] += 1
                        server.bodies[key] = body
                return self._send(200, json.dumps(reply).encode())

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                return  # clients that time out or are killed break pipes: expected here

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def spread(self, body: dict[str, Any]) -> float:
        """The extra latency of a chat request: 0 to `latency_spread_s`, by its messages."""
        if not self.latency_spread_s:
            return 0.0
        digest = hashlib.sha256(json.dumps(body.get("messages"), sort_keys=True).encode()).digest()
        return self.latency_spread_s * digest[0] / 255

    def refusal(self, body: dict[str, Any]) -> str | None:
        """Why this endpoint refuses the request (a 400), as real ones word it; None: it does not."""
        if self.reasoning and "max_tokens" in body:
            return "Unsupported parameter: 'max_tokens' is not supported with this model."
        if self.reasoning and "temperature" in body:
            return "Unsupported value: 'temperature' does not support 0.0 with this model."
        fmt = body.get("response_format")
        if fmt and fmt.get("type") not in self.accepts:
            return f"response_format type {fmt.get('type')!r} is not supported by this server"
        if fmt and self.strict_keywords and fmt.get("json_schema", {}).get("strict"):
            text = json.dumps(fmt["json_schema"].get("schema", {}))
            for keyword in (
                "maxLength",
                "minLength",
                "minimum",
                "maximum",
                "minItems",
                "maxItems",
                "default",
            ):
                if f'"{keyword}"' in text:
                    return f"Invalid schema for response_format: '{keyword}' is not permitted in strict mode"
        return None

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
