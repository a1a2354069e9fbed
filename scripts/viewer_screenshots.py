"""The README's two pictures of the viewer: the first view of an exported session, and
the same page with a debate clicked (read in the side panel).

    .venv/bin/python scripts/strong_session.py demo.db     # the session the docs show
    .venv/bin/dagmca export four-day-week --store demo.db --format html -o demo.html
    .venv/bin/python scripts/viewer_screenshots.py demo.html docs/ [--debate N]

Needs Debian's chromium (`apt-get install chromium`); the window is 1400 x 900.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.browser import Browser, chromium_path


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("html", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--debate", type=int, default=1, help="which debate to click, in drawing order")
    args = parser.parse_args()
    binary = chromium_path()
    if binary is None:
        sys.exit("viewer_screenshots: no chromium (apt-get install chromium)")
    args.out.mkdir(parents=True, exist_ok=True)
    # the browser may still be writing its profile as it is killed
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        browser = Browser(Path(tmp) / "profile", binary)
        try:
            page = browser.open(args.html.resolve())
            page.wait_for("window.dagmca && window.dagmca.ready", timeout=120)
            page.screenshot(args.out / "viewer-large.png")
            page.evaluate(f"dagmca.cy.nodes('.Debate')[{args.debate}].emit('tap'); true")
            time.sleep(0.5)  # the panel opens and the graph's box is resized
            page.screenshot(args.out / "viewer-debate.png")
            problems = page.problems()
        finally:
            browser.close()
    if problems:
        sys.exit(f"viewer_screenshots: the page reported {problems}")
    print(f"wrote {args.out / 'viewer-large.png'} and {args.out / 'viewer-debate.png'}")


if __name__ == "__main__":
    main()
