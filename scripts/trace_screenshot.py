"""The tracing guide's picture: a dagmca run's trace in Arize Phoenix, its span tree
(session, phase, debate, round, model call) beside one model call's attributes.

    python3.11 -m venv /tmp/pxvenv && /tmp/pxvenv/bin/pip install arize-phoenix
    PHOENIX_WORKING_DIR=/tmp/pxdata /tmp/pxvenv/bin/phoenix serve &     # UI and OTLP on :6006
    OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:6006 .venv/bin/dagmca run \\
        examples/free_will.txt --llm fake --store /tmp/trace-demo.db --session free-will \\
        --rounds 2 --cpp 2 --max-branches 2 --max-depth 1 --observers skeptical \\
        --monitor-every round --max-stub-checks 1 --strange-loops 0 -q
    .venv/bin/python scripts/trace_screenshot.py http://127.0.0.1:6006 docs/tracing-phoenix.png

The run needs dagmca's `otel` extra. Takes the latest trace whose root span is a session
(or --trace ID). Phoenix is not started or stopped here (`kill %1` ends the one above);
the headless Chromium it starts (Debian's `chromium`) is killed on the way out. The
window is 1500 x 1300.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.browser import Page, chromium_path

WIDTH, HEIGHT = 1500, 1300

# Page helpers: the tree's rows by span name (or its first word: "chat" for "chat
# gpt-4o"), in the tree's order; folding all but the first `skip` of them, since names
# repeat (every debate has a "round 1"); and the detail panel's tab that starts with a label.
HELPERS_JS = """
window.__rows = (name) => [...document.querySelectorAll('[role=button] .span-node__heading')]
    .filter((h) => h.textContent.trim() === name || h.textContent.trim().startsWith(name + ' '))
    .map((h) => h.closest('[role=button]'));
window.__collapse = (name, skip) => {
    const rows = window.__rows(name).slice(skip);
    for (const row of rows) {
        const toggle = row.querySelector('.collapse-toggle-button');
        if (toggle) toggle.click();
    }
    return rows.length;
};
window.__tab = (label) => [...document.querySelectorAll('[role=tab]')]
    .find((t) => t.textContent.startsWith(label));
true
"""


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as resp:
        return json.loads(resp.read())


def latest_session_trace(base: str, project: str) -> str:
    """The trace id of the newest root span named `session …`, from Phoenix's REST API."""
    best: tuple[str, str] | None = None
    cursor = ""
    while True:
        query = {"limit": "1000", **({"cursor": cursor} if cursor else {})}
        page = get_json(f"{base}/v1/projects/{project}/spans?{urllib.parse.urlencode(query)}")
        for span in page["data"]:
            if span.get("parent_id") is None and span["name"].startswith("session "):
                found = (span["start_time"], span["context"]["trace_id"])
                best = found if best is None or found > best else best
        cursor = page.get("next_cursor") or ""
        if not cursor:
            break
    if best is None:
        sys.exit(f"trace_screenshot: no session trace in project {project!r} at {base}")
    return best[1]


@contextmanager
def chromium(binary: str) -> Iterator[Page]:
    """A headless Chromium with one page, killed on exit."""
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as profile:
        proc = subprocess.Popen(
            [
                binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--no-default-browser-check", "--remote-debugging-port=0",
                f"--user-data-dir={profile}", "about:blank",
            ],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        try:
            assert proc.stderr is not None
            port = 0
            deadline = time.monotonic() + 60
            while not port and time.monotonic() < deadline:
                line = proc.stderr.readline()
                found = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
                if found:
                    port = int(found.group(1))
                elif not line and proc.poll() is not None:
                    break
            if not port:
                sys.exit("trace_screenshot: chromium did not start")
            targets = get_json(f"http://127.0.0.1:{port}/json/list")
            page = Page(next(t for t in targets if t["type"] == "page")["webSocketDebuggerUrl"])
            try:
                yield page
            finally:
                page.ws.close()
        finally:
            # Its own process group: the renderers and helpers go with it.
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def shoot(page: Page, url: str, out: Path) -> None:
    page.send("Page.enable")
    page.send("Runtime.enable")
    page.send(
        "Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT, deviceScaleFactor=1, mobile=False
    )
    page.send("Page.navigate", url=url)
    # The tree is drawn once the trace's spans have loaded; a loading skeleton has no names.
    page.wait_for("!!document.body && document.querySelectorAll('.span-node__heading').length > 3", 90)
    page.evaluate(HELPERS_JS)
    # Keep the main debate's first round open (its model calls); fold the rest so that
    # the branches phase, its branch debates and the judge's work fit in the window.
    page.evaluate("__collapse('round 1', 1) + __collapse('round 2', 0)")
    page.evaluate(
        "__collapse('debate branch', 1) + __collapse('debate judge', 0) + __collapse('debate merge', 0)"
    )
    # One model call selected, so the right-hand panel shows its GenAI attributes.
    page.evaluate("__rows('chat')[0].click(); true")
    page.wait_for("!!__tab('Attributes')")
    page.evaluate("__tab('Attributes').click(); true")
    page.wait_for("document.body.innerText.includes('gen_ai.usage.input_tokens')", 30)
    time.sleep(1.0)  # fonts and the timeline bars settle
    out.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(out)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("phoenix", help="Phoenix's URL, e.g. http://127.0.0.1:6006")
    parser.add_argument("out", type=Path, help="the PNG to write")
    parser.add_argument("--trace", help="trace id (default: the latest session's)")
    parser.add_argument("--project", default="default", help="Phoenix project (default: default)")
    args = parser.parse_args()
    binary = chromium_path()
    if binary is None:
        sys.exit("trace_screenshot: no chromium (apt-get install chromium)")
    base = args.phoenix.rstrip("/")
    try:
        trace = args.trace or latest_session_trace(base, args.project)
    except (OSError, ValueError) as exc:  # URLError and HTTPError are OSErrors
        sys.exit(f"trace_screenshot: Phoenix's REST API at {base} did not answer: {exc}")
    try:
        with chromium(binary) as page:
            shoot(page, f"{base}/redirects/traces/{trace}", args.out)
    except (RuntimeError, TimeoutError) as exc:  # the page never drew a trace, or drew another shape
        sys.exit(f"trace_screenshot: the trace view of {trace} did not come up as expected: {exc}")
    print(f"wrote {args.out} (trace {trace})")


if __name__ == "__main__":
    main()
