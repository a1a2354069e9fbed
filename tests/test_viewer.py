"""The HTML viewer in real headless Chromium (Debian's `chromium`): opened from disk
with the network off, it draws every node, shows details on a click, unfolds a
debate, logs no error, and renders a hostile passage as text."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from dagmca.export.html import script_json
from dagmca.store.graph import session_records
from dagmca.store.sqlite import SQLiteStore
from tests.browser import Browser, Page, chromium_path
from tests.test_cli import dagmca

HOSTILE = (
    "Cities should price road space. <script>alert(1)</script> Critics say \"no\" and 'never' "
    "& </script><img src=x onerror=alert(2)> traffic moves to poorer neighbourhoods."
)

pytestmark = pytest.mark.skipif(
    chromium_path() is None, reason="no chromium: `apt-get install chromium` (scripts/test.sh does, as root)"
)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str]:
    """A fake session on the hostile passage, exported as HTML: (file, node count, session)."""
    work = tmp_path_factory.mktemp("viewer")
    passage = work / "hostile.txt"
    passage.write_text(HOSTILE, encoding="utf-8")
    run = dagmca(
        "run", str(passage), "--llm", "fake", "--session", "xss", "--quiet", "--max-depth", "1", cwd=work
    )
    assert run.returncode == 0, run.stderr
    out = dagmca("export", "xss", "--format", "html", "-o", "xss.html", cwd=work)
    assert out.returncode == 0, out.stderr
    with SQLiteStore(work / ".dagmca" / "dagmca.db") as st:
        count = len(session_records(st, "xss")[0])  # the session's nodes and the personas it links
    return work / "xss.html", count, "xss"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    binary = chromium_path()
    assert binary is not None
    b = Browser(tmp_path_factory.mktemp("profile"), binary)
    yield b
    b.close()


def centre_of(page: Page, node_id: str) -> tuple[float, float]:
    script = (
        "(() => { const n = dagmca.cy.getElementById(ID); const p = n.renderedPosition();"
        " const r = dagmca.cy.container().getBoundingClientRect(); return [r.left + p.x, r.top + p.y]; })()"
    )
    x, y = page.evaluate(script.replace("ID", json.dumps(node_id)))
    return float(x), float(y)


def test_the_viewer_in_chromium(exported: tuple[Path, int, str], browser: Browser, tmp_path: Path) -> None:
    html, count, session = exported
    text = html.read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in text and "http://" not in text.split("cytoscape", 1)[0]
    page = browser.open(html)
    page.wait_for("window.dagmca && window.dagmca.ready")
    assert page.evaluate("dagmca.cy.nodes().length") == count == page.evaluate("dagmca.nodeCount")
    assert page.evaluate("document.scripts.length") == 3, "no script came from the data"
    shown = page.evaluate("dagmca.cy.nodes().filter(n => !n.hasClass('hidden')).length")
    assert 0 < shown < count, "rounds, turns and agents start collapsed"

    # Click the main debate: its details show, and its rounds and turns unfold.
    page.click(*centre_of(page, f"{session}/main"))
    page.wait_for(
        "document.getElementById('details-list').textContent.includes('What does this passage claim')"
    )
    unfolded = page.evaluate("dagmca.cy.nodes().filter(n => !n.hasClass('hidden')).length")
    assert unfolded > shown
    assert "Debate" in page.evaluate("document.getElementById('details-hint').textContent")

    # Click the session: the hostile passage is shown as text, and ran nothing.
    page.click(*centre_of(page, session))
    details = page.wait_for(
        "(() => { const t = document.getElementById('details-list').textContent;"
        " return t.includes('passage') ? t : ''; })()"
    )
    assert "<script>alert(1)</script>" in details and "onerror=alert(2)" in details
    assert page.evaluate("document.querySelectorAll('img').length") == 0

    # Search fades what does not match.
    page.evaluate("(() => { const s = document.getElementById('search'); s.value = 'poorer';"
                  " s.dispatchEvent(new Event('input')); })()")  # fmt: skip
    page.wait_for("dagmca.cy.nodes('.match').length > 0")

    page.screenshot(tmp_path / "viewer.png")
    if os.environ.get("DAGMCA_SCREENSHOT"):  # to look at it: DAGMCA_SCREENSHOT=/tmp/viewer.png
        page.screenshot(Path(os.environ["DAGMCA_SCREENSHOT"]))
    assert (tmp_path / "viewer.png").stat().st_size > 10_000
    assert page.problems() == []
    assert [u for u in page.requests() if not u.startswith(("file:", "data:", "about:"))] == []


def test_script_json_cannot_close_its_element() -> None:
    text = script_json({"passage": "</script><script>alert(1)</script> & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text)["passage"].startswith("</script>")
