"""The HTML viewer in real headless Chromium (Debian's `chromium`): opened from disk
with the network off, it shows details on a click, unfolds a debate, logs no error,
and renders a hostile passage as text; a session of thousands of nodes opens small
and legible, with every node reachable through its groups and the search, and a
debate reads as text in the side panel."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from dagmca.export.html import script_json, to_html
from dagmca.graph import EdgeType, NodeKind
from dagmca.store.networkx_view import session_records
from dagmca.store.sqlite import SQLiteStore
from tests.support.browser import Browser, Page, chromium_path
from tests.support.cli import dagmca
from tests.support.synthetic import synthetic_session

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


@pytest.mark.slow
def test_the_viewer_in_chromium(exported: tuple[Path, int, str], browser: Browser, tmp_path: Path) -> None:
    html, count, session = exported
    text = html.read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in text and "http://" not in text.split("cytoscape", 1)[0]
    page = browser.open(html)
    page.wait_for("window.dagmca && window.dagmca.ready")
    assert page.evaluate("dagmca.nodeCount") == count
    assert page.evaluate("document.scripts.length") == 3, "no script came from the data"
    shown = page.evaluate("dagmca.cy.nodes().filter(n => !n.hasClass('hidden')).length")
    assert 0 < shown < count, "rounds, turns and agents start collapsed"
    assert page.evaluate("dagmca.cy.nodes().length") < count, "and are not created until unfolded"

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


# -- a session of the size a strong endpoint produces ---------------------------------------
DRAWN = "dagmca.cy.nodes().filter(n => !n.hasClass('hidden'))"


@pytest.mark.slow
def test_a_large_session_opens_small_legible_and_complete(browser: Browser, tmp_path: Path) -> None:
    """2,727 nodes shaped like `--cpp 3 --depth 3 --rounds 3 --max-branches 3 --max-depth 2`
    on a strong endpoint: 14 debates, 116 tensions each."""
    nodes, edges = synthetic_session(2_727, 4_000, tensions=116, session="big")
    html = tmp_path / "big.html"
    html.write_text(to_html("big", nodes, edges), encoding="utf-8")
    page = browser.open(html)
    page.wait_for("window.dagmca && window.dagmca.ready")
    assert page.evaluate("dagmca.nodeCount") == len(nodes) == 2_727
    drawn = page.evaluate(f"{DRAWN}.length")
    assert 30 <= drawn <= 200
    sizes = page.evaluate(
        f"{DRAWN}.map(n => parseFloat(n.style('font-size')) * dagmca.cy.zoom()).sort((a, b) => a - b)"
    )
    assert sizes[len(sizes) // 2] >= 9, f"median label {sizes[len(sizes) // 2]:.1f} px"
    inside = page.evaluate(
        f"(() => {{ const w = dagmca.cy.width(), h = dagmca.cy.height(); return {DRAWN}.filter(n => {{"
        " const p = n.renderedPosition(); return p.x >= 0 && p.y >= 0 && p.x <= w && p.y <= h; })"
        ".length; })()"
    )
    assert inside == drawn, "the first view is fitted to the window"

    # Read a debate: its question, round by round each turn's text, its tensions.
    main = "big/main"
    page.evaluate(f"dagmca.cy.getElementById({json.dumps(main)}).emit('tap'); true")
    reading = page.wait_for("document.getElementById('reading').textContent")
    by_id = {n.id: n for n in nodes}
    first_turn = next(n for n in nodes if n.kind is NodeKind.TURN and n.props["debate"] == main)
    assert str(by_id[main].props["question"]) in reading
    assert "Round 1" in reading and "Round 3" in reading and str(first_turn.props["text"]) in reading
    assert "Tensions (116)" in reading
    assert page.evaluate("dagmca.cy.nodes('.Turn').length") == 72, "the debate's turns unfolded"

    # A tension folded into its debate's group: found by the search, drawn on a click,
    # and read with the turn that raised it.
    explored = {e.target for e in edges if e.type is EdgeType.EXPLORES}
    stubs = [
        n for n in nodes if n.kind is NodeKind.TENSION and n.props["debate"] == main and n.id not in explored
    ]
    quiet = min(stubs, key=lambda t: float(t.props["urgency"]))
    assert not page.evaluate(f"dagmca.cy.getElementById({json.dumps(quiet.id)}).nonempty()")
    page.evaluate(
        f"(() => {{ const s = document.getElementById('search'); s.value = {json.dumps(quiet.id)};"
        " s.dispatchEvent(new Event('input')); })()"
    )
    page.wait_for(f"document.querySelector('a.node[data-node=\"{quiet.id}\"]') !== null")
    page.evaluate(f"document.querySelector('a.node[data-node=\"{quiet.id}\"]').click(); true")
    reading = page.wait_for(f"dagmca.cy.getElementById({json.dumps(quiet.id)}).selected() &&"
                            " document.getElementById('reading').textContent")  # fmt: skip
    flagged = next(e.target for e in edges if e.type is EdgeType.FLAGGED_AT and e.source == quiet.id)
    assert str(quiet.props["question"]) in reading and str(by_id[flagged].props["text"]) in reading

    # A turn of another debate, folded twice over (its debate's rounds are not drawn):
    # Enter in the search box draws every match.
    turn = next(n for n in reversed(nodes) if n.kind is NodeKind.TURN)
    assert not page.evaluate(f"dagmca.cy.getElementById({json.dumps(turn.id)}).nonempty()")
    page.evaluate(
        f"(() => {{ const s = document.getElementById('search'); s.value = {json.dumps(turn.id)};"
        " s.dispatchEvent(new KeyboardEvent('keydown', {key: 'Enter'})); })()"
    )
    assert page.evaluate(f"dagmca.cy.getElementById({json.dumps(turn.id)}).hasClass('match')")

    # Every tension is reachable through the groups: unfold them all.
    page.evaluate(
        "(() => { for (let i = 0; i < 50; i++) { const shut = dagmca.cy.nodes('.Group')"
        ".filter(g => !g.data('caption').startsWith('fold')); if (!shut.length) break;"
        " shut.forEach(g => g.emit('tap')); } return true; })()"
    )
    tensions = sum(1 for n in nodes if n.kind is NodeKind.TENSION)
    assert page.evaluate("dagmca.cy.nodes('.Tension').length") == tensions
    # and the legend draws a kind folded at first: every agent
    page.evaluate("document.querySelector('input[data-name=\"Agent\"]').click(); true")
    agents = sum(1 for n in nodes if n.kind is NodeKind.AGENT)
    assert page.evaluate(f"{DRAWN}.filter(n => n.data('kind') === 'Agent').length") == agents > 0
    page.screenshot(tmp_path / "big.png")
    assert page.problems() == []


@pytest.mark.slow
def test_a_study_s_findings_show_their_recurrence(browser: Browser, tmp_path: Path) -> None:
    """The three scripted samples' study, exported: its findings drawn at once, each
    captioned with how many runs reach it, and a click reads its members."""
    from dagmca.store.findings import study_records
    from tests.support.stability import STUDY, aligned_three

    with SQLiteStore(tmp_path / "study.db") as store:
        store.init_schema()
        aligned_three(store, tmp_path / "out")
        nodes, edges = study_records(store, STUDY)
    html = tmp_path / "study.html"
    html.write_text(to_html(STUDY, nodes, edges), encoding="utf-8")
    page = browser.open(html)
    page.wait_for("window.dagmca && window.dagmca.ready")
    captions = page.evaluate(f"{DRAWN}.filter(n => n.data('kind') === 'Finding').map(n => n.data('caption'))")
    assert len(captions) == 7 and sorted(c.split(":")[0] for c in captions).count("3 of 3 runs") == 2
    core = next(n.id for n in nodes if n.kind is NodeKind.FINDING and n.props["k"] == 3)
    page.click(*centre_of(page, core))
    reading = page.wait_for(
        "(() => { const t = document.getElementById('reading').textContent;"
        " return t.includes('runs') ? t : ''; })()"
    )
    assert "in 3 of 3 runs" in reading and "Seen as (3)" in reading
    assert page.problems() == []
