"""Cypher on the embedded store: every cookbook query (and a set of queries that probe
the language's corners) gives the rows the Bolt server gives for the same sessions;
what the engine cannot run, and every write, is refused with one line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dagmca.graph import PERSONA_SESSION
from dagmca.store.embedded import CypherSyntaxError, Unsupported, load, run
from dagmca.store.neo4j import connect
from dagmca.store.push import push_session
from dagmca.store.query import records_to_rows
from dagmca.store.sqlite import SQLiteStore
from tests.support.bolt_server import BoltServer
from tests.support.cli import assert_user_error, dagmca
from tests.support.cookbook import COOKBOOK, NOT_ON_THE_TEST_SERVER, CookbookQuery
from tests.support.cypher_constructs import CONSTRUCTS, REFUSED, guide_examples
from tests.support.cypher_rows import comparable, rounded
from tests.support.cypher_sessions import RICH, STORES

# The language's corners: grouping, null, ordering, arithmetic, UNION, paths, predicates.
PROBES = [
    "MATCH (n:Node {session: $session}) RETURN n.id AS id ORDER BY n.seq LIMIT 7",
    "MATCH (t:Tension {session: $session}) RETURN t.status AS status, count(*) AS n ORDER BY status",
    "MATCH (d:Debate {session: $session}) OPTIONAL MATCH (d)-[:CONTRADICTS]->(x) "
    "RETURN d.id AS d, x.id AS x ORDER BY d, x",
    "UNWIND [3, 1, null, 2] AS x RETURN x ORDER BY x DESC",
    "UNWIND [3, 1, null, 2] AS x RETURN x ORDER BY x",
    "UNWIND [1, 2, 3, 4] AS x RETURN x % 2 AS odd, sum(x) AS total, count(x) AS n ORDER BY odd",
    "RETURN 7 / 2 AS i, 7.0 / 2 AS f, 7 % 3 AS m, round(2.5) AS r, null = null AS nn, 1 = 1.0 AS eq, "
    "'a' + 1 AS s, size([1, null]) AS sz, [1, 2, 3][1..] AS tail, [1, 2, 3][-1] AS last",
    "MATCH (s:Session) RETURN s.id AS id UNION MATCH (s:Session) RETURN s.id AS id",
    "MATCH (s:Session) RETURN s.id AS id UNION ALL MATCH (s:Session) RETURN s.id AS id",
    "MATCH (a:Agent {session: $session}) RETURN DISTINCT a.role AS role ORDER BY role",
    "MATCH (t:Turn {session: $session}) WHERE t.text CONTAINS 'buses' OR t.round IS NULL "
    "RETURN count(t) AS n",
    "MATCH (d:Debate {session: $session}) "
    "RETURN d.id AS id, CASE d.origin WHEN 'main' THEN 1 ELSE 2 END AS o ORDER BY id SKIP 1 LIMIT 2",
    "MATCH (d:Debate {session: $session})-[:HAS_ROUND]->(r) WITH d, count(r) AS rounds WHERE rounds >= 1 "
    "RETURN d.id AS id, rounds ORDER BY id",
    "MATCH (n:Node {session: $session}) WHERE n.created_at <= datetime() RETURN count(n) AS n",
    "MATCH p = (d:Debate {session: $session})-[:HAS_ROUND]->(:Round) "
    "RETURN length(p) AS len, [n IN nodes(p) | n.id] AS ids ORDER BY ids",
    "MATCH (t:Tension {session: $session}) WHERE any(w IN split(t.question, ' ') WHERE w = 'flat') "
    "RETURN t.id AS id",
    "MATCH (t:Tension {session: $session}) WHERE NOT (t)-[:FLAGGED_AT]->(:Turn) RETURN count(t) AS n",
    "MATCH (a:Node {session: $session})-[r]-(b:Node) RETURN type(r) AS type, count(*) AS n ORDER BY type",
    "MATCH (x:Nothing) RETURN count(x) AS n, collect(x.id) AS ids, sum(x.n) AS s, avg(x.n) AS a",
]


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    made = {}
    for name, (make, _, _) in STORES.items():
        folder = tmp_path_factory.mktemp(name)
        store = SQLiteStore(folder / "dagmca.db")
        store.init_schema()
        make(store, folder / "out")
        store.close()
        made[name] = folder / "dagmca.db"
    return made


@pytest.fixture(scope="module")
def on_bolt(stores: dict[str, Path], bolt_server: BoltServer) -> dict[tuple[str, str], Any]:
    """Each query's rows on the Bolt server, holding the same sessions and personas."""
    rows: dict[tuple[str, str], Any] = {}
    for name, path in stores.items():
        _, session, sessions = STORES[name]
        with SQLiteStore(path) as src, connect(bolt_server.new_target()) as dst:
            dst.init_schema()
            for s in [*sessions, PERSONA_SESSION]:
                push_session(src, dst, s)
            cookbook = [q.text for q in COOKBOOK if q.name not in NOT_ON_THE_TEST_SERVER]
            for text in cookbook + PROBES + guide_examples():
                rows[(name, text)] = records_to_rows(dst.run_query(text, {"session": session}))[1]
            if name == "rich":
                for text in CONSTRUCTS.values():
                    rows[(name, text)] = records_to_rows(dst.run_query(text, {"session": session}))[1]
    return rows


def embedded(path: Path, text: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    with SQLiteStore(path) as st:
        return run(load(st), text, params)[1]


@pytest.mark.parametrize("store", list(STORES))
@pytest.mark.parametrize(
    "q", [q for q in COOKBOOK if q.name not in NOT_ON_THE_TEST_SERVER], ids=lambda q: q.name
)
@pytest.mark.slow
def test_every_cookbook_query_gives_the_bolt_servers_rows(
    store: str, q: CookbookQuery, stores: dict[str, Path], on_bolt: dict[tuple[str, str], Any]
) -> None:
    mine = embedded(stores[store], q.text, {"session": STORES[store][1]})
    assert comparable(q.text, mine, ordered=False) == comparable(
        q.text, on_bolt[(store, q.text)], ordered=False
    )


def test_the_comparison_is_not_empty(stores: dict[str, Path]) -> None:
    answered = {
        q.name for q in COOKBOOK for name in STORES
        if embedded(stores[name], q.text, {"session": STORES[name][1], "search": "buses"})
    }  # fmt: skip
    assert {q.name for q in COOKBOOK} == answered


@pytest.mark.parametrize("store", list(STORES))
@pytest.mark.parametrize("text", PROBES)
def test_the_languages_corners_give_the_bolt_servers_rows(
    store: str, text: str, stores: dict[str, Path], on_bolt: dict[tuple[str, str], Any]
) -> None:
    mine = embedded(stores[store], text, {"session": STORES[store][1]})
    ordered = "ORDER BY" in text
    assert comparable(text, mine, ordered=ordered) == comparable(
        text, on_bolt[(store, text)], ordered=ordered
    )


def test_the_embedded_store_searches_the_texts(stores: dict[str, Path]) -> None:
    (search,) = [q for q in COOKBOOK if q.name == "search-the-texts"]
    rows = embedded(stores["rich"], search.text, {"session": RICH, "search": "buses"})
    with SQLiteStore(stores["rich"]) as st:
        found = [st.get_node(r["id"]) for r in rows]
    texts = [
        " ".join(str(n.props.get(k, "")) for k in ("question", "text", "resolution")) for n in found if n
    ]
    assert rows and len(texts) == len(rows) and all("buses" in t.lower() for t in texts)
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)


@pytest.mark.parametrize("name", list(CONSTRUCTS))
def test_each_construct_gives_the_bolt_servers_rows(
    name: str, stores: dict[str, Path], on_bolt: dict[tuple[str, str], Any]
) -> None:
    """Label predicates and expressions, map projections, reduce, pattern comprehensions,
    COUNT/EXISTS/CALL subqueries, percentiles and collect(DISTINCT): the rows a Bolt
    server gives."""
    text = CONSTRUCTS[name]
    mine = rounded(embedded(stores["rich"], text, {"session": RICH}))
    ordered = "ORDER BY" in text
    theirs = rounded(on_bolt[("rich", text)])
    assert comparable(text, mine, ordered=ordered) == comparable(text, theirs, ordered=ordered)
    assert mine, "a construct compared on no rows shows nothing"


@pytest.mark.parametrize("store", list(STORES))
@pytest.mark.parametrize("text", guide_examples())
def test_the_guides_examples_give_the_bolt_servers_rows(
    store: str, text: str, stores: dict[str, Path], on_bolt: dict[tuple[str, str], Any]
) -> None:
    """The querying guide's examples (a date filter on sessions, the length of a run, the
    shortest path from a tension to the final): the rows a Bolt server gives, and rows."""
    mine = embedded(stores[store], text, {"session": STORES[store][1]})
    assert comparable(text, mine, ordered=True) == comparable(text, on_bolt[(store, text)], ordered=True)
    assert mine, "an example compared on no rows shows nothing"


def test_the_guide_has_its_examples() -> None:
    texts = " ".join(guide_examples())
    assert len(guide_examples()) >= 3
    assert all(needle in texts for needle in ("date(", "duration.between(", "shortestPath("))


@pytest.mark.parametrize(
    ("text", "named"),
    [
        *REFUSED,
        ("CREATE (n:X) RETURN n", "CREATE writes"),
        ("OPTIONAL CALL { RETURN 1 AS x } RETURN x", "OPTIONAL CALL"),
    ],
)
def test_what_the_engine_lacks_is_named(stores: dict[str, Path], text: str, named: str) -> None:
    with pytest.raises(Unsupported) as caught:
        embedded(stores["rich"], text, {})
    assert named in caught.value.line() and "\n" not in caught.value.line()


@pytest.mark.parametrize(
    "text", ["MATCH (n RETURN n", "MATCH (n) RETURN", "RETURN 1 +", "MATCH (n)", "MATCH (n) RETRUN n"]
)
def test_a_query_that_is_not_cypher_is_one_line(stores: dict[str, Path], text: str) -> None:
    with pytest.raises(CypherSyntaxError) as caught:
        embedded(stores["rich"], text, {})
    assert "\n" not in caught.value.line()


@pytest.mark.slow
def test_query_on_the_default_store_after_a_run(tmp_path: Path) -> None:
    passage = tmp_path / "p.txt"
    passage.write_text("Cities should price road space. Critics say it is unfair.", encoding="utf-8")
    ran = dagmca(
        "run", str(passage), "--llm", "fake", "--session", "q1", "--quiet", "--max-depth", "1",
        "--rounds", "1", cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    exported = dagmca("export", "q1", "-f", "json", "-o", str(tmp_path / "q1.json"), cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    graph = json.loads((tmp_path / "q1.json").read_text(encoding="utf-8"))
    debates = sum(1 for n in graph["nodes"] if n.get("kind") == "Debate")
    asked = dagmca("query", "MATCH (d:Debate) RETURN count(d) AS c", "--json", cwd=tmp_path)
    assert asked.returncode == 0, asked.stderr
    assert json.loads(asked.stdout) == [{"c": debates}] and debates > 0
    # a procedure this store lacks: one line naming it, exit 2, no traceback
    lacking = dagmca("query", "CALL apoc.help('x') YIELD name RETURN name", cwd=tmp_path)
    assert lacking.returncode == 2 and "apoc.help" in lacking.stderr
    assert len(lacking.stderr.strip().splitlines()) == 1 and "Traceback" not in lacking.stderr
    # a write: refused without --write, and with it (this store's Cypher only reads)
    before = (tmp_path / ".dagmca" / "dagmca.db").read_bytes()
    for extra, needle in (((), "writes (CREATE)"), (("--write",), "--write needs a Neo4j store")):
        refused = dagmca("query", "CREATE (n:Node {id: 'x'}) RETURN n", *extra, cwd=tmp_path)
        assert refused.returncode == 2 and needle in refused.stderr, refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
    assert (tmp_path / ".dagmca" / "dagmca.db").read_bytes() == before


@pytest.mark.slow
def test_a_missing_parameter_is_one_line(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "e.db")
    store.init_schema()
    store.close()
    proc = dagmca(
        "query", "MATCH (s:Session {id: $session}) RETURN s", "--store", str(tmp_path / "e.db"), cwd=tmp_path
    )
    assert_user_error(proc, "$session", tmp_path)
