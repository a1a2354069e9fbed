"""The emergence ledger on scripted sessions: a final's claims traced to the turns that
state them (single, from the earliest; recombined, from two agents' parts; unsupported,
from none, by the entailment check; tests/test_ledger_origins.py has the passage and the
checked origins), verdicts with their sentence and reason, the prefilter only picking
candidates, a paraphrase traced where the similarity estimate calls it new, a reversal
not taken for its original; --ledger off and all; the estimate and the cost on the
scripted strong model; a budget-cut ledger resumed from the cache; `check`, `metrics`,
`dagmca ledger`, and the cookbook's ledger queries on a real Bolt server."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from dagmca.config import SessionConfig
from dagmca.debate.estimate import project
from dagmca.graph import CallPhase, ClaimNode, EdgeType, NodeKind, Phase, node_from_record
from dagmca.llm.fake import ScriptedCall, ScriptedLLM
from dagmca.llm.prices import Prices
from dagmca.metrics import measures
from dagmca.metrics.ledger import ClaimLine, arm_shares, claim_lines
from dagmca.metrics.session import session_metrics
from dagmca.similarity import HashingEmbedder, MiniLMEmbedder
from dagmca.store.check import check_store
from dagmca.store.sqlite import SQLiteStore
from dagmca.workspace.session import SessionMode
from tests.support.judges import sentences_of
from tests.support.ledger import JOINED, SAID, SMALL, A, B, C, claims, debate, edges_of, judge_rule, run
from tests.support.opened import open_state
from tests.support.sessions import PASSAGE, run_scripted
from tests.support.strong_fake import LONG_PASSAGE, StrongModel

COPIED = A  # a turn's sentence, copied
UNSAID = "Cities should pilot the charge for a year before holding a binding referendum."
REVERSED = "Congestion charges lower traffic in the charged zone within the first year."


def lines(store: SQLiteStore, session: str = "s1") -> list[ClaimLine]:
    nodes = [node_from_record(r) for r in store.nodes(session)]
    return claim_lines(nodes, store.edges(session))


FINAL = " ".join([COPIED, JOINED, UNSAID, REVERSED])


@pytest.fixture
def traced(store: SQLiteStore, tmp_path: Path) -> tuple[Any, Any, ScriptedLLM]:
    return run(store, tmp_path, debate(SAID, FINAL, judge_rule()), **SMALL)


def test_a_copied_sentence_is_single_and_first_stated_at_the_earliest_turn_that_states_it(
    store: SQLiteStore, traced: tuple[Any, Any, ScriptedLLM]
) -> None:
    c = claims(store)[COPIED]
    assert c.origin.value == "single" and c.stated_in == "s1/final"
    # three turns state it: the leaf's lateral revision in round 1 comes before the root's
    # observation of that round and the other leaf's answer in round 2
    stating = {e.target for e in edges_of(store, c, EdgeType.DERIVES_FROM) if e.props["verdict"] == "states"}
    assert stating >= {"s1/main/r1/L1N1/lateral", "s1/main/r1/L0N1/observe", "s1/main/r2/L1N2/respond"}
    first = edges_of(store, c, EdgeType.FIRST_STATED_AT)
    assert [e.target for e in first] == [c.first_stated_at] == ["s1/main/r1/L1N1/lateral"]
    assert (c.first_debate, c.first_round, c.agents) == ("s1/main", 1, ["analytical"])
    assert "L1N1" in c.reason and c.method.value == "llm"
    assert check_store(store, "s1") == []


def test_a_claim_joining_two_agents_points_is_recombined_from_both(
    store: SQLiteStore, traced: tuple[Any, Any, ScriptedLLM]
) -> None:
    c = claims(store)[JOINED]
    assert c.origin.value == "recombined" and not c.first_stated_at
    derives = edges_of(store, c, EdgeType.DERIVES_FROM)
    assert derives and {e.props["verdict"] for e in derives} == {"partial"}
    agents = {store.get_node(e.target).props["agent"] for e in derives}  # type: ignore[union-attr]
    assert agents == {"L1N1", "L1N2"} and c.agents == ["analytical", "creative"]
    assert {e.props["sentence"] for e in derives} == {B, C}
    assert not edges_of(store, c, EdgeType.FIRST_STATED_AT)


def test_a_claim_nothing_states_or_entails_is_unsupported_and_the_prefilter_only_picks_candidates(
    store: SQLiteStore, traced: tuple[Any, Any, ScriptedLLM]
) -> None:
    made = claims(store)
    unsaid = made[UNSAID]
    assert unsaid.origin.value == "unsupported" and not edges_of(store, unsaid, EdgeType.DERIVES_FROM)
    assert "does not follow" in unsaid.reason
    # the reversal shares nearly every word with a turn: the prefilter picks that turn,
    # the judge finds it does not state the claim, and no DERIVES_FROM is drawn
    c = made[REVERSED]
    check = next(k for k in c.checks if k.node == "s1/main/r1/L1N2/respond")
    assert check.similarity >= 0.7 and check.verdict.value == "unrelated" and check.reason
    assert c.origin.value == "unsupported" and not edges_of(store, c, EdgeType.DERIVES_FROM)
    assert "no specialist's turn or passage sentence states it" in c.reason


def test_every_verdict_records_its_sentence_and_reason(
    store: SQLiteStore, traced: tuple[Any, Any, ScriptedLLM]
) -> None:
    made = claims(store)
    assert set(made) == {COPIED, JOINED, UNSAID, REVERSED}
    for c in made.values():
        assert c.reason and c.of == 4 and all(k.reason and k.method.value == "llm" for k in c.checks)
        for e in edges_of(store, c, EdgeType.DERIVES_FROM):
            assert e.props["verdict"] in ("states", "partial") and e.props["sentence"] and e.props["reason"]
            assert e.props["sentence"] in store.get_node(e.target).props["text"]  # type: ignore[union-attr]
            assert e.props["method"] == "llm" and isinstance(e.props["similarity"], float)
        judged = {k.node for k in c.checks if k.verdict.value != "unrelated"}
        assert judged == {e.target for e in edges_of(store, c, EdgeType.DERIVES_FROM)}


def test_the_shares_reach_the_metrics(store: SQLiteStore, traced: tuple[Any, Any, ScriptedLLM]) -> None:
    _, state, _ = traced
    m = session_metrics(store, "s1", HashingEmbedder())
    assert m.ledger is not None and m.ledger.final is not None
    assert (m.ledger.final.claims, m.ledger.final.single, m.ledger.final.recombined) == (4, 0.25, 0.25)
    assert (m.ledger.final.unsupported, m.ledger.final.emergent, m.ledger.final.passage) == (0.5, 0.0, 0.0)
    assert m.ledger.final == arm_shares(store, "s1")
    # the summary hands in the nodes it has read: the same shares
    assert arm_shares(store, "s1", store.nodes("s1")) == m.ledger.final
    assert m.ledger.originators == {"analytical": 2, "creative": 1}
    assert m.ledger.first_appearance == {"main r1": 2}
    assert state.metrics is not None and state.metrics.ledger == m.ledger
    assert all(d.ledger is None for d in m.debates)  # --ledger final traces no resolution
    dumped = json.loads(m.model_dump_json())
    assert dumped["ledger"]["final"]["unsupported"] == 0.5 and "similarity_novelty" in dumped["debates"][0]


def test_the_ledger_json_names_its_sources(store: SQLiteStore, traced: tuple[Any, Any, ScriptedLLM]) -> None:
    by_text = {c.text: c for c in lines(store)}
    single = by_text[COPIED]
    assert single.first_stated_at in {s.id for s in single.derives_from if s.verdict == "states"}
    recombined = by_text[JOINED]
    assert len({s.agent for s in recombined.derives_from}) >= 2 and len(recombined.derives_from) >= 2
    assert not [s for s in by_text[UNSAID].derives_from if s.verdict == "states"]
    keys = set(single.model_dump())
    assert keys >= {"id", "text", "stated_in", "origin", "first_stated_at", "derives_from", "reason"}


def test_a_paraphrase_is_traced_to_its_turn_where_the_similarity_estimate_calls_it_new(
    store: SQLiteStore, tmp_path: Path
) -> None:
    turn = (
        "Congestion is a cost each driver imposes on others, and a price makes it visible. If every "
        "motorist paid for the minutes their car costs the people queuing behind it, fewer would drive "
        "at the peak."
    )
    paraphrase = "Charging road users for the delay they cause other travellers would thin rush-hour traffic."
    said = {("L1N2", "respond", 1): turn}
    rule = judge_rule({paraphrase: "If every motorist paid for the minutes their car costs"})
    embedder = MiniLMEmbedder()
    try:
        run(store, tmp_path, debate(said, paraphrase, rule), embedder=embedder, **SMALL)
        assert measures.root_novelty(paraphrase, [turn], embedder) == 1.0  # novel, by similarity
    finally:
        embedder.close()
    c = claims(store)[paraphrase]
    assert c.origin.value == "single" and c.first_stated_at == "s1/main/r1/L1N2/respond"
    assert check_store(store, "s1") == []


def test_ledger_off_makes_no_ledger_call(store: SQLiteStore, tmp_path: Path) -> None:
    _, state, fake = run(store, tmp_path, debate(SAID, FINAL, judge_rule()), **{**SMALL, "ledger": "off"})
    assert not [c for c in fake.calls if c.meta.phase == CallPhase.LEDGER]
    assert not claims(store) and state.metrics is not None and state.metrics.ledger is None
    assert not [c for c in store.calls("s1") if c.phase == CallPhase.LEDGER]


def test_ledger_all_traces_each_resolution_but_not_to_its_own_turn(
    store: SQLiteStore, tmp_path: Path
) -> None:
    _, state, fake = run(store, tmp_path, debate(SAID, FINAL, judge_rule()), **{**SMALL, "ledger": "all"})
    main = state.graph.debates["s1/main"]
    own = [c for c in claims(store).values() if c.stated_in == "s1/main"]
    assert own and sentences_of(main.resolution) == [c.text for c in sorted(own, key=lambda c: c.number)]
    giving = [n.id for n in store.nodes("s1") if n.props.get("text") == main.resolution]
    assert giving and not {k.node for c in own for k in c.checks} & set(giving)
    # the final's claims may derive from the resolution too: a text said before it
    assert "s1/main" in {k.node for k in claims(store)[COPIED].checks} | {"s1/main"}
    m = session_metrics(store, "s1", HashingEmbedder())
    assert m.debates[0].ledger is not None and m.debates[0].ledger.claims == len(own)
    assert m.ledger is not None and m.ledger.traced is not None and m.ledger.traced.claims == len(own) + 4
    agents = {"ledger", "ledger-entailment", "ledger-recombination"}
    assert all(c.meta.phase != CallPhase.LEDGER or c.meta.agent in agents for c in fake.calls)
    assert check_store(store, "s1") == []


@pytest.mark.slow
def test_the_estimate_counts_the_ledger_and_a_strong_session_stays_within_it(
    store: SQLiteStore, tmp_path: Path
) -> None:
    cfg = SessionConfig(llm="fake")
    p = project(cfg, LONG_PASSAGE, Prices(0.0, 0.0, "test"))
    assert (p.by_kind["ledger: claims"].min, p.by_kind["ledger: claims"].max) == (1, 1)
    assert p.by_kind["ledger: verdicts"].max == cfg.ledger_max_claims
    off = project(cfg.model_copy(update={"ledger": "off"}), PASSAGE, Prices())
    assert "ledger: claims" not in off.by_kind
    every = project(cfg.model_copy(update={"ledger": "all"}), LONG_PASSAGE, Prices(0.0, 0.0, "test"))
    assert every.by_kind["ledger: claims"].max == every.debates.max + every.by_kind["merges"].max + 1
    # a default session on the scripted strong model
    model = StrongModel()
    result, _, fake = run_scripted(store, tmp_path, model, passage=LONG_PASSAGE, caps=True)
    made = store.calls("s1")
    ledger = [c for c in made if c.phase == CallPhase.LEDGER]
    splits = [c for c in fake.calls if c.meta.phase == CallPhase.LEDGER and c.schema.__name__ == "Claims"]
    checks = [c for c in ledger if c.agent == "ledger-entailment"]
    together = [c for c in ledger if c.agent == "ledger-recombination"]
    verdicts = len(ledger) - 1 - len(checks) - len(together)
    assert len(splits) == 1 and verdicts <= p.by_kind["ledger: verdicts"].max
    assert len(checks) <= p.by_kind["ledger: entailment checks"].max
    assert len(together) <= p.by_kind["ledger: recombination checks"].max
    assert p.calls.min <= len(made) <= p.calls.max
    assert len(ledger) <= 0.15 * (len(made) - len(ledger)), "the ledger adds at most 15% of the calls"
    # what judging pairs in both orders and checking entailment add, counted by their agent
    extra = [c for c in made if c.agent in ("judge-swapped", "ledger-entailment")]
    assert [c for c in made if c.agent == "judge-swapped"], "the pairs' second order is asked"
    assert len(extra) <= 0.15 * len(made), "both orders and the entailment checks add at most 15%"
    assert result.session.status == "done" and check_store(store, "s1") == []
    assert arm_shares(store, "s1") is not None


def test_a_budget_cut_ledger_resumes_from_the_cache_without_asking_again(
    store: SQLiteStore, tmp_path: Path
) -> None:
    with SQLiteStore(tmp_path / "count.db") as other:  # its own store: no reply cached for the run
        other.init_schema()
        _, _, without = run(other, tmp_path, debate(SAID, FINAL, judge_rule()), **{**SMALL, "ledger": "off"})
    # room for the split and about one verdict: the rest of the claims are left for later
    budget = len(without.calls) + 4
    responder = debate(SAID, FINAL, judge_rule())
    first, _, _ = run(store, tmp_path, responder, cache=True, max_llm_calls=budget, **SMALL)
    assert first.session.status == "budget_exhausted"
    written = set(claims(store))
    assert 0 < len(written) < 4 and check_store(store, "s1") == []
    cut = arm_shares(store, "s1")
    assert cut is not None and (cut.claims, cut.untraced) == (len(written), 4 - len(written))
    # resumed with the budget raised: every earlier call replayed, the written claims not
    # asked again, the split answered from the cache, only the untraced claims judged
    again, _, fake2 = run(
        store, tmp_path, debate(SAID, FINAL, judge_rule()), cache=True, mode=SessionMode.RESUME, **SMALL
    )
    asked = [c for c in fake2.calls if c.meta.phase == CallPhase.LEDGER]
    kinds = {"SourceVerdicts", "Entailment"}
    assert asked and all(c.schema is not None and c.schema.__name__ in kinds for c in asked)
    assert len(fake2.calls) == len(asked), "everything else came from the cache"
    claim_of = re.compile(r"\nThe claim to (?:trace|check): (.*)\n")
    traced_again = {m.group(1) for c in asked if (m := claim_of.search(c.prompt))}
    assert len(traced_again) >= 1
    assert not traced_again & written
    assert set(claims(store)) == {COPIED, JOINED, UNSAID, REVERSED}
    assert again.session.status == "done" and check_store(store, "s1") == []
    whole = arm_shares(store, "s1")
    assert whole is not None and (whole.claims, whole.untraced) == (4, 0)
    # and a third run of the finished session makes no ledger call at all: every claim is written
    responder = debate(SAID, FINAL, judge_rule())
    _, _, fake3 = run(store, tmp_path, responder, cache=True, mode=SessionMode.REVISIT, **SMALL)
    assert not fake3.calls


def test_a_final_written_anew_gets_its_claims_traced_and_the_old_ones_superseded(
    store: SQLiteStore, traced: tuple[Any, Any, ScriptedLLM]
) -> None:
    """As after a revisit that integrates again: the final's new text is traced (by
    `dagmca ledger`'s own path here), and the claims of its old text stay in the graph,
    superseded, out of every measure."""
    from dagmca.debate.session import ledger_session
    from dagmca.graph import FinalNode

    new_final = f"{COPIED} Shops in the centre lose few suburban visitors."
    store.write([FinalNode(id="s1/final", session="s1", text=new_final).to_record()])
    cfg = SessionConfig(llm="fake", cache=False, agent_memory="session", **SMALL)
    fake = ScriptedLLM(debate(SAID, new_final, judge_rule()))

    async def go() -> None:
        async with open_state(
            cfg,
            store,
            client=fake,
            session_id="s1",
            passage=PASSAGE,
            embedder=HashingEmbedder(),
            mode=SessionMode.REVISIT,
        ) as state:
            result = await ledger_session(state)
            assert result.claims == 2 and result.untraced == 0

    asyncio.run(go())
    assert sorted(c.text for c in lines(store)) == sorted(sentences_of(new_final))
    old = {c.text for c in claims(store).values() if c.superseded}
    assert old == {JOINED, UNSAID, REVERSED}  # by text, COPIED is the new claim: its old twin is superseded
    superseded = [n for n in (node_from_record(r) for r in store.nodes("s1")) if isinstance(n, ClaimNode)]
    assert sum(c.superseded for c in superseded) == 4
    m = session_metrics(store, "s1", HashingEmbedder())
    assert m.ledger is not None and m.ledger.final is not None and m.ledger.final.claims == 2
    assert check_store(store, "s1") == []


# -- the command, and the cookbook on a real Bolt server -------------------------------------
@pytest.mark.slow
def test_dagmca_ledger_traces_a_session_run_without_it(tmp_path: Path) -> None:
    from tests.support.cli import dagmca

    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    db = tmp_path / "g.db"
    common = ["--store", str(db)]
    ran = dagmca("run", str(passage), "--llm", "fake", "--ledger", "off", "--max-depth", "0",
                 "--session", "s", "--quiet", *common, cwd=tmp_path)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "emergence ledger" in ran.stdout and "not traced" in ran.stdout
    shown = dagmca("ledger", "s", "--json", *common, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    listed = json.loads(shown.stdout)["claims"]
    assert listed and all(set(c) >= {"id", "text", "stated_in", "origin", "derives_from"} for c in listed)
    target = str(tmp_path / "s.json")
    exported = dagmca("export", "s", "--format", "json", "-o", target, *common, cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    ids = {n["id"] for n in json.loads((tmp_path / "s.json").read_text())["nodes"]}
    assert {c["id"] for c in listed} <= ids
    assert dagmca("check", "s", *common, cwd=tmp_path).returncode == 0
    metrics = dagmca("metrics", "s", "--json", *common, cwd=tmp_path)
    assert json.loads(metrics.stdout)["ledger"]["final"]["claims"] == len(listed)
    read = dagmca("metrics", "s", *common, cwd=tmp_path, env={"COLUMNS": "400"})
    (row,) = [line for line in read.stdout.splitlines() if "read against a control" in line]
    assert "a share alone has no scale" in row and "single arm measures that share (the control)" in row
    with sqlite3.connect(db) as con:
        before = con.execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0]
    again = dagmca("ledger", "s", *common, cwd=tmp_path)  # traced: shown, nothing asked
    assert again.returncode == 0 and "final answer:" in again.stdout, again.stderr
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0] == before


@pytest.mark.slow
def test_the_cookbook_ledger_queries_return_the_claims_the_json_lists(
    store: SQLiteStore, traced: tuple[Any, Any, ScriptedLLM], bolt_server: Any
) -> None:
    from dagmca.store.neo4j import Neo4jStore, connect
    from dagmca.store.push import push_session
    from tests.support.cookbook import load_cookbook

    queries = {q.name: q for q in load_cookbook(Path(__file__).parents[1] / "examples" / "queries.cypher")}
    listed = lines(store)
    with connect(bolt_server.new_target()) as dst:
        dst.init_schema()
        push_session(store, dst, "s1")
        assert isinstance(dst, Neo4jStore)

        def rows(name: str) -> list[dict[str, Any]]:
            assert "ledger" in queries[name].needs
            return dst.run_query(queries[name].text, {"session": "s1"})

        unstated = {c.id for c in listed if c.origin in ("emergent", "inferred", "unsupported")}
        assert unstated and {r["claim"] for r in rows("claims-no-agent-stated")} == unstated
        originating = rows("perspectives-originating-final-claims")
        by_perspective = {r["perspective"]: r["claims"] for r in originating}
        assert by_perspective == dict(Counter(p for c in listed for p in c.perspectives))
        travelled = rows("how-a-claim-travelled")
        assert {(r["claim"], r["source_id"]) for r in travelled} == {
            (c.id, s.id) for c in listed for s in c.derives_from
        }
        firsts = {c.first_stated_at for c in listed if c.first_stated_at}
        assert {r["source_id"] for r in travelled if r["first"]} == firsts


@pytest.mark.slow
def test_the_viewer_lists_the_finals_claims_and_a_click_draws_and_selects_their_turns(
    store: SQLiteStore, traced: tuple[Any, Any, ScriptedLLM], tmp_path: Path
) -> None:
    from dagmca.export.html import to_html
    from dagmca.store.networkx_view import session_records
    from tests.support.browser import Browser, chromium_path

    binary = chromium_path()
    if binary is None:
        pytest.skip("no chromium: `apt-get install chromium` (scripts/test.sh does, as root)")
    html = tmp_path / "s1.html"
    html.write_text(to_html("s1", *session_records(store, "s1")), encoding="utf-8")
    recombined = claims(store)[JOINED]
    sources = sorted(e.target for e in edges_of(store, recombined, EdgeType.DERIVES_FROM))
    browser = Browser(tmp_path / "profile", binary)
    try:
        page = browser.open(html)
        page.wait_for("window.dagmca && window.dagmca.ready")
        page.evaluate("dagmca.cy.getElementById('s1/final').emit('tap'); true")
        reading = page.wait_for("document.getElementById('reading').textContent")
        assert "Claims (4)" in reading and JOINED in reading and "recombined" in reading
        link = f"a.node[data-node={json.dumps(recombined.id)}]"
        page.evaluate(f"document.querySelector({json.dumps(link)}).click(); true")
        chosen = "dagmca.cy.nodes(':selected').map(n => n.id())"
        selected = page.wait_for(f"(() => {{ const s = {chosen}; return s.length > 1 ? s : null; }})()")
        assert sorted(selected) == sorted([recombined.id, *sources])  # the turns drawn and selected
        reading = page.evaluate("document.getElementById('reading').textContent")
        assert f"Derives from ({len(sources)})" in reading and B in reading and C in reading
        assert page.problems() == []
    finally:
        browser.close()


@pytest.mark.local_model
@pytest.mark.slow
def test_the_bundled_model_completes_a_session_with_the_ledger(tmp_path: Path) -> None:
    from tests.support.cli import dagmca

    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    # auto leaves the ledger off on the local model: asked for here
    ran = dagmca("run", str(passage), "--session", "s", "--max-depth", "0", "--rounds", "1", "--quiet",
                 "--ledger", "final", cwd=tmp_path, timeout=1200)  # fmt: skip
    assert ran.returncode in (0, 4), ran.stderr
    with SQLiteStore(tmp_path / ".dagmca" / "dagmca.db") as st:
        assert check_store(st, "s") == []
        assert [c for c in st.calls("s") if c.phase == CallPhase.LEDGER], "the ledger asked the model"
    assert dagmca("check", "s", cwd=tmp_path).returncode == 0


ROOT_CLAIM = "Pricing road space works only when its revenue visibly returns to the people who pay it."
ROOT_PARTS = (  # the root's output in parts: the resolution renders it, so the two differ in words
    f"Position: {ROOT_CLAIM}\n"
    "Disagreements:\n- L1N1 and L1N2 differ on whether exemptions for carers can be policed."
)


def test_ledger_all_reads_a_resolution_in_parts_as_the_root_turn_that_gave_it(
    store: SQLiteStore, tmp_path: Path
) -> None:
    """The resolution is the root's output rendered in parts, not its turn's words: its
    claims are still not traced to the root turn that gave it, so a claim only the root
    made is not `single`."""
    scripted = debate(SAID, FINAL, judge_rule())

    def respond(call: ScriptedCall) -> Any:
        if call.meta.agent == "L0N1" and call.meta.phase in (Phase.OBSERVE, Phase.STRANGE_LOOP):
            return ROOT_PARTS
        return scripted(call)

    _, state, _ = run(store, tmp_path, respond, **{**SMALL, "ledger": "all"})
    main = state.graph.debates["s1/main"]
    assert main.resolution != ROOT_PARTS and ROOT_CLAIM in main.resolution  # rendered in parts
    giving = {n.id for n in store.nodes("s1", NodeKind.TURN) if n.props.get("text") == ROOT_PARTS}
    assert giving
    own = [c for c in claims(store).values() if c.stated_in == "s1/main"]
    assert own and not {k.node for c in own for k in c.checks} & giving
    [root_claim] = [c for c in own if ROOT_CLAIM in c.text]
    assert root_claim.origin.value != "single" and root_claim.agents == []
    assert check_store(store, "s1") == []
