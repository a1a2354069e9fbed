"""What one OTLP export request costs the sending process, by transport: the OTLP
exporter's `requests` session (the SDK's default), its urllib3 transport, and dagmca's
`http.client` one (dagmca/tracing/transport.py), each under the SDK's own client.

    .venv/bin/python scripts/bench_otlp_transport.py [--requests 50] [--kib 400] [--rounds 5] [--busy]

A receiver in a child process (so its work is not the sender's) takes each request on
127.0.0.1. Each round sends `--requests` requests of `--kib` KiB through every
transport in turn; printed per transport: the CPU time of the sending thread per
request (median and range over the rounds) and the CPU of importing what the transport
needs, in a fresh interpreter after dagmca's own modules. `--busy` keeps another Python
thread of the sender busy meanwhile, as a run's event loop is: the interpreter then
switches between the two, which is part of what a request costs in a run."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RECEIVER = """
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def log_message(self, *a): pass
server = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(server.server_port, flush=True)
server.serve_forever()
"""
IMPORTS = {  # what each transport imports that a traced run would not otherwise
    "requests": "import requests",
    "urllib3": "import urllib3",
    "http.client": "import http.client",
}


def import_cpu(module: str) -> float:
    """CPU seconds of importing the transport's library after dagmca's modules."""
    code = (
        "import time, dagmca.cli.app, dagmca.runner, dagmca.tracing.spans;"
        f"t = time.process_time(); {IMPORTS[module]}; print(time.process_time() - t)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                                check=True).stdout)  # fmt: skip


def senders(url: str) -> dict[str, Callable[[bytes], object]]:
    from opentelemetry.exporter.http.transport._urllib3 import Urllib3HTTPTransport
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    from dagmca.tracing.transport import HTTPTransport

    made = {
        "requests": OTLPSpanExporter(endpoint=url),
        "urllib3": OTLPSpanExporter(endpoint=url, _transport=Urllib3HTTPTransport()),
        "http.client": OTLPSpanExporter(endpoint=url, _transport=HTTPTransport()),
    }
    return {name: exporter._client.export for name, exporter in made.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=50)
    ap.add_argument("--kib", type=int, default=400)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--busy", action="store_true", help="another thread of the sender kept busy")
    args = ap.parse_args()
    receiver = subprocess.Popen([sys.executable, "-c", RECEIVER], stdout=subprocess.PIPE, text=True)
    try:
        assert receiver.stdout is not None
        url = f"http://127.0.0.1:{receiver.stdout.readline().strip()}/v1/traces"
        send = senders(url)
        body = os.urandom(args.kib * 1024)
        stop = threading.Event()
        if args.busy:

            def spin() -> None:
                n = 0
                while not stop.is_set():
                    n += sum(range(1000))

            threading.Thread(target=spin, daemon=True).start()
        for post in send.values():  # each connection open, each library warm
            post(body)
        per: dict[str, list[float]] = {name: [] for name in send}
        for _ in range(args.rounds):
            for name, post in send.items():
                started = time.thread_time()
                for _ in range(args.requests):
                    if not getattr(post(body), "success", False):
                        raise SystemExit(f"{name}: a request failed")
                per[name].append((time.thread_time() - started) / args.requests)
        stop.set()
    finally:
        receiver.kill()
    busy = ", another thread busy" if args.busy else ""
    print(f"{args.requests} requests of {args.kib} KiB a round, {args.rounds} rounds{busy}")
    for name, costs in per.items():
        print(
            f"{name:12} CPU a request: median {statistics.median(costs) * 1e3:.2f} ms "
            f"({min(costs) * 1e3:.2f}-{max(costs) * 1e3:.2f}); import {import_cpu(name) * 1e3:.0f} ms"
        )


if __name__ == "__main__":
    main()
