"""Shortest paths, type predicates, the checks made before a query runs, and the
refusals of the embedded store's Cypher, on small graphs built for each: what Neo4j
answers (or refuses) for the same query."""

from __future__ import annotations

from typing import Any

import pytest

from dagmca.store.embedded import CypherSyntaxError, Graph, Unsupported, run
from dagmca.store.embedded.values import Node, Rel


def chain(links: list[tuple[int, int]], count: int) -> Graph:
    """Nodes `0`…`count - 1` (label N, `id` their number as text) and a relationship R
    for each link."""
    nodes = [Node(i, ("N",), {"id": str(i)}) for i in range(count)]
    rels: list[Rel] = []
    for a, b in links:
        rel = Rel(len(rels), "R", nodes[a], nodes[b], {})
        rels.append(rel)
        nodes[a].out.append(rel)
        nodes[b].inc.append(rel)
    return Graph.of(nodes, rels)


# 0 -> 1 -> 2 -> 3, 0 -> 4 -> 3, 3 -> 5 -> 0: two ways from 0 to 3, and cycles through 0
GRAPH = [(0, 1), (1, 2), (2, 3), (0, 4), (4, 3), (3, 5), (5, 0)]


def ids(query: str, **params: Any) -> list[Any]:
    _, rows = run(chain(GRAPH, 6), query, params)
    return [next(iter(r.values())) for r in rows]


def test_shortest_path_finds_the_shortest_way() -> None:
    found = ids("MATCH (a {id: '0'}), (b {id: '3'}) MATCH p = shortestPath((a)-[*]->(b)) "
                "RETURN [n IN nodes(p) | n.id] AS ids")  # fmt: skip
    assert found == [["0", "4", "3"]]
    every = ids("MATCH (a {id: '0'}), (b {id: '3'}) MATCH p = allShortestPaths((a)-[*]-(b)) "
                "RETURN [n IN nodes(p) | n.id] AS ids ORDER BY ids")  # fmt: skip
    assert every == [["0", "4", "3"], ["0", "5", "3"]]
    assert ids("MATCH (a {id: '3'}), (b {id: '1'}) MATCH p = shortestPath((a)-[*..2]->(b)) RETURN p") == []


def test_the_selectors_of_neo4j_5() -> None:
    two = ids("MATCH p = SHORTEST 2 (a {id: '0'})-[:R]->+(b {id: '3'}) RETURN [n IN nodes(p) | n.id] AS ids")
    assert two == [["0", "4", "3"], ["0", "1", "2", "3"]]
    assert ids("MATCH p = ALL SHORTEST (a {id: '0'})-->+(b {id: '3'}) RETURN length(p) AS n") == [2]
    groups = ids("MATCH p = SHORTEST 2 GROUPS (a {id: '0'})-->{1,5}(b {id: '3'}) RETURN length(p) AS n")
    assert sorted(groups) == [2, 3]
    assert ids("MATCH p = ANY SHORTEST (a {id: '2'})-->+(b {id: '0'}) RETURN length(p) AS n") == [3]


def test_a_path_of_length_zero_follows_neo4js_rules() -> None:
    # a lower bound of 0: a node is its own shortest path
    assert ids("MATCH (a {id: '0'}) MATCH p = shortestPath((a)-[*0..]->(a)) RETURN length(p) AS n") == [0]
    assert ids("MATCH p = SHORTEST 1 (a {id: '0'})-->*(b {id: '0'}) RETURN length(p) AS n") == [0]
    # a lower bound of 1: a selector finds the shortest cycle back …
    assert ids("MATCH p = SHORTEST 1 (a {id: '0'})-->+(b {id: '0'}) RETURN length(p) AS n") == [4]
    # … and shortestPath refuses the pair, as Neo4j does by default
    with pytest.raises(Exception, match="start and end are the same node"):
        ids("MATCH (a {id: '0'}) MATCH p = shortestPath((a)-[*]->(a)) RETURN p")


def test_type_predicates() -> None:
    _, rows = run(
        Graph([], []),
        "RETURN 1 IS :: INTEGER AS a, 1 IS NOT :: STRING AS b, null IS :: INTEGER AS c, "
        "null IS :: INTEGER NOT NULL AS d, [1, null] IS :: LIST<INTEGER> AS e, "
        "[1, null] IS :: LIST<INTEGER NOT NULL> AS f, 1.5 :: FLOAT AS g, "
        "'x' IS TYPED ANY<INTEGER | STRING> AS h, date() IS :: DATE AS i, {a: 1} IS :: MAP AS j, "
        "1 IS :: BOOL AS k",
        {},
    )
    assert rows == [
        {"a": True, "b": True, "c": True, "d": False, "e": True, "f": False, "g": True, "h": True, "i": True,
         "j": True, "k": False}
    ]  # fmt: skip
    assert run(Graph([], []), "RETURN 1 IS :: INTEGER", {})[1] == [{"1 IS :: INTEGER": True}]


@pytest.mark.parametrize(
    "text",
    [
        "MATCH ()-[r]-() MATCH (r) RETURN r",  # a relationship, then a node
        "MATCH r = ()-->() MATCH (r) RETURN r",  # a path, then a node
        "MATCH (n)-[n]->() RETURN n",
        "WITH 123 AS n MATCH (n) RETURN n",
        "MATCH p = (p)-->() RETURN p",
        "MATCH ()-[r]->()-[r]->() RETURN r",
        "RETURN foo",
        "MATCH (n) WHERE (n)-[r]->() RETURN n",  # a pattern predicate cannot introduce r
        "MATCH (n) RETURN n.a AS x, n.b AS x",
        "MATCH (n) WITH n.a RETURN 1 AS one",
        "MATCH (n) WITH n.a AS a ORDER BY count(*) RETURN a",
        "MATCH (n) RETURN DISTINCT n.a AS a ORDER BY n.b",
    ],
)
def test_what_neo4j_refuses_before_it_runs_is_refused_before_a_row_is_read(text: str) -> None:
    with pytest.raises(CypherSyntaxError) as caught:
        run(Graph([], []), text, {})
    assert not isinstance(caught.value, Unsupported) and "\n" not in caught.value.line()


@pytest.mark.parametrize(
    "text",
    [
        "MATCH (n) RETURN n.a AS a ORDER BY n.b",  # no DISTINCT: n is still there
        "MATCH (n) RETURN n.a AS a, count(*) AS c ORDER BY n.a",  # a projected expression
        "MATCH ()-[r1]->()-[r2]->() WITH [r1, r2] AS rs MATCH ()-[rs*]->() RETURN rs",
        "MATCH (n) WITH n.a AS a, count(*) AS c ORDER BY a + c RETURN a",
        "MATCH (n) RETURN [x IN [1, 2] WHERE x > 1 | x] AS xs, reduce(s = 0, x IN [1] | s + x) AS r",
        "UNWIND [1] AS x CALL { WITH x RETURN x * 2 AS y } RETURN y",
        "MATCH (a)-[r]-(b) WHERE EXISTS { (a)-[s]->(c) } RETURN r",
    ],
)
def test_what_neo4j_runs_is_not_refused(text: str) -> None:
    run(Graph([], []), text, {})


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("MATCH ((a)-->(b)){1,3} RETURN a", "quantified path patterns"),
        ("MATCH REPEATABLE ELEMENTS (a)-->(b) RETURN a", "REPEATABLE ELEMENTS"),
        ("MATCH (n:$($label)) RETURN n", "dynamic labels"),
        ("RETURN 'a' IS NORMALIZED AS n", "IS NORMALIZED"),
        ("MATCH p = SHORTEST 1 (a)-->(b)-->(c) RETURN p", "path selector"),
        ("RETURN point({x: 1, y: 2}) AS p", "point()"),
        ("WHEN true THEN RETURN 1 AS x", "conditional queries"),
    ],
)
def test_an_unsupported_construct_is_named_not_expected(text: str, named: str) -> None:
    """Refused by the name Neo4j's manual gives it, never as a parser's expectation."""
    with pytest.raises(Unsupported) as caught:
        run(Graph([], []), text, {"label": "X"})
    assert named in caught.value.line() and "expected" not in caught.value.line()


def test_neo4j_5_syntax_the_engine_reads() -> None:
    _, rows = run(
        chain(GRAPH, 6),
        "CYPHER 5 MATCH (a {id: '0'})-[r:!S]->(b) WITH a, count(r) AS out "
        "RETURN CASE out WHEN < 2 THEN 'few' ELSE 'many' END AS how, 'a' || 'b' AS ab, 0x1F AS hex, "
        ".5 AS half, toIntegerOrNull('x') AS none",
        {},
    )
    assert rows == [{"how": "many", "ab": "ab", "hex": 31, "half": 0.5, "none": None}]
