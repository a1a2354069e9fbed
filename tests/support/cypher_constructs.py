"""The reading Cypher that Neo4j users write beyond the cookbook, a query or a few per
construct, over the rich session of tests/support/cypher_sessions.py: each must give the
same rows on the embedded store as on a Bolt server holding the same session (the tests'
ArcadeDB runs every one of them, and so does Neo4j with NEO4J_URI set). The queries read
values that differ from row to row (tokens, roles, agents), so a construct that is
computed wrong shows."""

from __future__ import annotations

import re
from pathlib import Path

# name -> query; `$session` is the rich session.
CONSTRUCTS: dict[str, str] = {
    # label predicates in WHERE
    "where-label": "MATCH (n:Node {session: $session}) WHERE n:Tension RETURN count(n) AS c",
    "where-labels-and": "MATCH (n:Node {session: $session}) WHERE n:Tension:Stub "
    "RETURN n.id AS id ORDER BY id",
    "where-labels-or": "MATCH (n:Node {session: $session}) WHERE n:Debate|Synthesis RETURN count(n) AS c",
    "where-label-negated": "MATCH (t:Tension {session: $session}) WHERE NOT t:Stub RETURN count(t) AS c",
    # label expressions in patterns
    "pattern-labels-or": "MATCH (n:Debate|Synthesis {session: $session}) RETURN count(n) AS c",
    "pattern-labels-and": "MATCH (n:Tension&Stub {session: $session}) RETURN n.id AS id ORDER BY id",
    "pattern-labels-not": "MATCH (n:Node&!Turn&!Agent {session: $session}) RETURN count(n) AS c",
    # WHERE inside node and relationship patterns
    "pattern-where": "MATCH (t:Turn WHERE t.session = $session AND t.tokens > 330)"
    "-[b:BY WHERE b.session = $session]->(a) RETURN a.id AS agent, count(t) AS n ORDER BY agent",
    "pattern-where-in-exists": "MATCH (t:Turn {session: $session}) "
    "WHERE EXISTS { (t)-[:REVISES]->(u:Turn WHERE u.tokens > 330) } RETURN count(t) AS n",
    # map projections
    "map-projection": "MATCH (d:Debate {session: $session}) "
    "RETURN d {.id, .origin, deeper: d.depth + 1} AS d ORDER BY d.id",
    "map-projection-all": "MATCH (r:Round {session: $session}) "
    "RETURN r {.*, seq: null, created_at: null} AS r ORDER BY r.id",
    # reduce
    "reduce": "MATCH (r:Round {session: $session})<-[:IN_ROUND]-(t:Turn) WITH r, collect(t.tokens) AS xs "
    "RETURN r.id AS id, reduce(acc = 0, x IN xs | acc + x) AS total, reduce(n = 0, x IN xs | n + 1) AS n "
    "ORDER BY id",
    # pattern comprehensions
    "pattern-comprehension": "MATCH (r:Round {session: $session}) "
    "RETURN r.id AS id, size([(r)<-[:IN_ROUND]-(t:Turn) | t.tokens]) AS turns ORDER BY id",
    "pattern-comprehension-where": "MATCH (r:Round {session: $session}) RETURN r.id AS id, "
    "reduce(s = 0, x IN [(r)<-[:IN_ROUND]-(t:Turn) WHERE t.role = 'integrator' | t.tokens] | s + x) "
    "AS integrated ORDER BY id",
    # COUNT { } and EXISTS { }, with a pattern and with a full match
    "count-pattern": "MATCH (a:Agent {session: $session}) "
    "RETURN a.id AS id, COUNT { (a)<-[:BY]-(:Turn) } AS turns ORDER BY id",
    "count-match": "MATCH (a:Agent {session: $session}) RETURN a.id AS id, "
    "COUNT { MATCH (a)<-[:BY]-(t:Turn) WHERE t.tokens > 330 RETURN t } AS long ORDER BY id",
    "exists-pattern": "MATCH (t:Turn {session: $session}) "
    "WHERE EXISTS { (t)-[:REVISES]->(:Turn) } RETURN count(t) AS n",
    "exists-match": "MATCH (t:Turn {session: $session}) "
    "WHERE EXISTS { MATCH (t)<-[:FLAGGED_AT]-(x:Tension) WITH x WHERE x.status <> 'stub' RETURN x } "
    "RETURN count(t) AS n",
    # read-only CALL { } subqueries
    "call-subquery": "MATCH (r:Round {session: $session}) "
    "CALL { WITH r MATCH (r)<-[:IN_ROUND]-(t:Turn) RETURN max(t.tokens) AS most, count(t) AS n } "
    "RETURN r.id AS id, most, n ORDER BY id",
    "call-subquery-union": "CALL { MATCH (d:Debate {session: $session}) RETURN d.id AS id "
    "UNION MATCH (s:Synthesis {session: $session}) RETURN s.id AS id } RETURN count(id) AS n",
    "call-subquery-scope": "MATCH (a:Agent {session: $session}) "
    "CALL (a) { MATCH (a)<-[:BY]-(t:Turn) RETURN t.tokens AS tokens ORDER BY tokens DESC LIMIT 2 } "
    "RETURN a.id AS id, tokens ORDER BY id, tokens",
    # percentiles and collect(DISTINCT …)
    "percentile-cont": "MATCH (t:Turn {session: $session}) RETURN percentileCont(t.tokens, 0.5) AS p50, "
    "percentileCont(t.tokens, 0.9) AS p90, percentileCont(t.tokens, 0.33) AS p33",
    "percentile-disc": "MATCH (t:Turn {session: $session}) RETURN percentileDisc(t.tokens, 0.5) AS p50, "
    "percentileDisc(t.tokens, 0.25) AS p25, percentileDisc(t.tokens, 1.0) AS top, "
    "percentileDisc(t.tokens, 0) AS low",
    "collect-distinct": "MATCH (t:Turn {session: $session}) "
    "RETURN collect(DISTINCT t.role) AS roles, count(DISTINCT t.agent) AS agents",
    # temporal values: stored timestamps, text, maps, components, arithmetic, truncation
    "timestamps-as-datetimes": "MATCH (s:Session {id: $session}) "
    "RETURN date(s.started_at) = date(s.finished_at) AS same_day, s.started_at.year >= 2025 AS recent, "
    "s.finished_at > s.started_at AS after",
    "duration-between": "MATCH (s:Session {id: $session}) "
    "RETURN duration.between(s.started_at, s.finished_at) AS took, "
    "duration.inSeconds(s.started_at, s.finished_at).milliseconds AS ms",
    "temporal-text": "RETURN date('2015-W30-2') AS w, localtime('12:31') AS lt, time('12:31:14+01:00') AS t, "
    "duration({minutes: 90}) AS d, datetime('2015-07-21T21:40:32.142+01:00') AS dt",
    "temporal-arithmetic": "RETURN date('2024-01-31') + duration('P1M') AS next, "
    "duration.between(date('1984-10-11'), date('2015-06-24')) AS span, "
    "datetime('2015-07-21T21:40:32.142+01:00') < datetime('2015-07-21T21:40:32.142Z') AS earlier",
    "temporal-components": "RETURN date('2015-07-21').week AS w, date('2015-07-21').dayOfWeek AS dow, "
    "date('2015-07-21').ordinalDay AS od, duration('P1DT2H').hours AS h, "
    "date.truncate('month', date('2015-07-21')) AS m",
    "recent-nodes": "MATCH (n:Node {session: $session}) "
    "WHERE n.created_at >= datetime() - duration({hours: 1}) RETURN count(n) AS recent",
    # type predicates
    "type-predicates": "RETURN 1 IS :: INTEGER AS a, 'x' IS NOT :: STRING AS b, "
    "[1, 2] IS :: LIST<INTEGER> AS c, null IS :: INTEGER NOT NULL AS d, 1.5 IS :: FLOAT AS f",
    "type-predicates-on-properties": "MATCH (a:Agent {session: $session}) "
    "RETURN a.id AS id, a.role IS :: STRING AS s, a.id IS NOT :: INTEGER AS n ORDER BY id",
    # shortest paths
    "shortest-path": "MATCH (t:Tension {session: $session}), (f:Final {session: $session}) "
    "MATCH p = shortestPath((t)-[*]-(f)) RETURN t.id AS tension, length(p) AS hops ORDER BY tension",
    "all-shortest-paths": "MATCH (t:Tension {session: $session}), (f:Final {session: $session}) "
    "MATCH p = allShortestPaths((t)-[*]-(f)) RETURN t.id AS tension, count(p) AS paths ORDER BY tension",
}


def guide_examples() -> list[str]:
    """The Cypher examples of the querying guide (its ```cypher blocks), as written."""
    guide = Path(__file__).resolve().parents[2] / "docs" / "guides" / "querying.md"
    return re.findall(r"^```cypher\n(.*?)^```", guide.read_text(encoding="utf-8"), re.S | re.M)


# Constructs the engine refuses, each with the words of Neo4j's Cypher manual its refusal uses.
REFUSED: list[tuple[str, str]] = [
    ("EXPLAIN MATCH (n) RETURN n", "plans are Neo4j's"),
    ("PROFILE MATCH (n) RETURN n", "plans are Neo4j's"),
    ("MATCH p = SHORTEST 1 (a)-->(b)-->(c) RETURN p", "a path selector (SHORTEST"),
    ("RETURN 'a' IS NORMALIZED AS n", "IS NORMALIZED"),
    ("MATCH ((a)-->(b)){1,3} RETURN a", "quantified path patterns"),
    ("MATCH (n) CALL { WITH n CREATE (m:X) } IN TRANSACTIONS RETURN n", "CREATE"),
    ("RETURN apoc.coll.sum([1, 2]) AS s", "apoc.coll.sum()"),
    # refused as written, even when no row would call it
    ("MATCH (x:Nothing) RETURN apoc.coll.toSet([x]) AS s", "apoc.coll.toSet()"),
    ("CALL gds.pageRank.stream('g') YIELD nodeId RETURN nodeId", "gds.pageRank.stream"),
    ("USE other MATCH (n) RETURN n", "USE"),
]
