"""Export times for a synthetic session (default 20,000 nodes, 30,000 edges), every
format, from records already in memory (what `dagmca export` does after one read);
then, where Debian's chromium is installed, how long the HTML viewer takes to open.

    .venv/bin/python scripts/bench_export.py [--nodes 20000] [--edges 30000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagmca.export.formats import WRITERS
from tests.support.synthetic import synthetic_session


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=20_000)
    parser.add_argument("--edges", type=int, default=30_000)
    args = parser.parse_args()
    nodes, edges = synthetic_session(args.nodes, args.edges, session="bench")
    print(f"synthetic session: {len(nodes):,} nodes, {len(edges):,} edges")
    print(f"{'format':10} {'seconds':>8} {'MB':>8}")
    for fmt, write in WRITERS.items():
        started = time.perf_counter()
        text = write("bench", nodes, edges)
        seconds = time.perf_counter() - started
        print(f"{fmt:10} {seconds:>8.2f} {len(text.encode()) / 1e6:>8.1f}", flush=True)
        if fmt == "html":
            html = text
    viewer_open(html)


def viewer_open(html: str, runs: int = 5) -> None:
    """Open the viewer `runs` times, each in a fresh tab: the median time from opening
    the file to a drawn, interactive first view; what that view draws; its labels' size."""
    from tests.support.browser import Browser, chromium_path

    binary = chromium_path()
    if binary is None:
        print("viewer: no chromium, not measured")
        return
    drawn = "dagmca.cy.nodes().filter(n => !n.hasClass('hidden'))"
    times: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.html"
        path.write_text(html, encoding="utf-8")
        browser = Browser(Path(tmp) / "profile", binary)
        try:
            for _ in range(runs):
                started = time.perf_counter()
                page = browser.open(path)
                page.wait_for("window.dagmca && window.dagmca.ready", timeout=600)
                times.append(time.perf_counter() - started)
            shown = page.evaluate(f"{drawn}.length")
            created = page.evaluate("dagmca.cy.nodes().length")
            label = page.evaluate(
                f"(() => {{ const s = {drawn}.map(n => parseFloat(n.style('font-size')) * dagmca.cy.zoom())"
                ".sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; })()"
            )
        finally:
            browser.close()
    times.sort()
    print(
        f"viewer: open to interactive, median of {runs} {times[len(times) // 2]:.2f} s "
        f"(min {times[0]:.2f}, max {times[-1]:.2f}) in headless chromium; first view {shown:,} nodes "
        f"drawn ({created:,} created), median label {label:.1f} px"
    )


if __name__ == "__main__":
    main()
