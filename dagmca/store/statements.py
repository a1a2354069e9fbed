"""Every Cypher statement dagmca sends, as named builders (the rows they take and give
back are mapped to and from records in rows.py).

Values reach Cypher only as parameters. Labels and relationship types cannot be
parameters in Neo4j 5, so builders take them only from `NodeKind`, `EXTRA_LABELS`
and `EdgeType`: the enums are the whitelist. Everything here is plain Neo4j 5
Cypher (no APOC, no map-valued properties), which ArcadeDB's Bolt plugin also runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dagmca.graph import EdgeType, NodeKind
from dagmca.store.rows import EXTRA_LABELS

NODE_LABEL = "Node"
# Where earlier versions kept the call log and the response cache in the user's graph
# (now beside it, in a SQLite file): `dagmca cache prune` removes what is left of them.
LEGACY_CALL_LABEL = "LLMCall"
LEGACY_CACHE_LABEL = "LLMCache"
ID_CONSTRAINT = "dagmca_node_id"
# Build workers' claims on passages: not part of the graph (no `Node` label), and gone
# once the passage is done.
CLAIM_LABEL = "BuildClaim"
CLAIM_CONSTRAINT = "dagmca_claim_key"
FULLTEXT_INDEX = "dagmca_text"

# Indexes on what the cookbook (examples/queries.cypher) filters by.
_INDEXES = (
    ("dagmca_node_session", NODE_LABEL, "session"),
    ("dagmca_session_status", NodeKind.SESSION.value, "status"),
    ("dagmca_session_started", NodeKind.SESSION.value, "started_at"),
    ("dagmca_debate_origin", NodeKind.DEBATE.value, "origin"),
    ("dagmca_debate_depth", NodeKind.DEBATE.value, "depth"),
    ("dagmca_tension_status", NodeKind.TENSION.value, "status"),
    ("dagmca_tension_urgency", NodeKind.TENSION.value, "urgency"),
    ("dagmca_tension_category", NodeKind.TENSION.value, "category"),
    ("dagmca_tension_observer", NodeKind.TENSION.value, "observer"),
    ("dagmca_turn_phase", NodeKind.TURN.value, "phase"),
    ("dagmca_turn_perspective", NodeKind.TURN.value, "perspective"),
    ("dagmca_persona_name", NodeKind.PERSONA.value, "name"),
)
# The texts a full-text query searches: questions, turns, resolutions, the final.
FULLTEXT_KINDS = (
    NodeKind.DEBATE, NodeKind.TENSION, NodeKind.TURN, NodeKind.SYNTHESIS, NodeKind.FINAL,
)  # fmt: skip
FULLTEXT_PROPS = ("question", "text", "resolution")


def schema_statements() -> list[str]:
    """Constraint and indexes, Neo4j 5 syntax, each safe to run twice."""
    stmts = [f"CREATE CONSTRAINT {ID_CONSTRAINT} IF NOT EXISTS FOR (n:{NODE_LABEL}) REQUIRE n.id IS UNIQUE"]
    for name, label, prop in _INDEXES:
        stmts.append(f"CREATE INDEX {name} IF NOT EXISTS FOR (n:{label}) ON (n.{prop})")
    return stmts


def claim_constraint() -> str:
    """One claim per key (the store's, for build workers; not part of an exported graph)."""
    return f"CREATE CONSTRAINT {CLAIM_CONSTRAINT} IF NOT EXISTS FOR (c:{CLAIM_LABEL}) REQUIRE c.key IS UNIQUE"


def fulltext_index() -> str:
    """The full-text index over the texts (Neo4j 5; not every Bolt server has them)."""
    labels = "|".join(k.value for k in FULLTEXT_KINDS)
    props = ", ".join(f"n.{p}" for p in FULLTEXT_PROPS)
    return f"CREATE FULLTEXT INDEX {FULLTEXT_INDEX} IF NOT EXISTS FOR (n:{labels}) ON EACH [{props}]"


def show_indexes() -> str:
    return "SHOW INDEXES YIELD name RETURN name"


def text_search(
    terms: Sequence[str], sessions: Sequence[str] | None, limit: int, *, fulltext: bool
) -> tuple[str, dict[str, Any]]:
    """The search of the nodes' texts for any of `terms`, and its parameters: through
    the full-text index, or (`fulltext` off: a server without one) the portable CONTAINS
    query. ("", {}) when there is no term to search for."""
    words = [t.strip().lower() for t in terms if t.strip()]
    if not words:
        return "", {}
    scoped = sessions is not None
    params: dict[str, Any] = {"sessions": list(sessions or []), "limit": limit}
    if fulltext:
        return fulltext_search(scoped=scoped), {
            **params,
            "index": FULLTEXT_INDEX,
            "query": lucene_query(words),
        }
    return contains_search(scoped=scoped), {**params, "terms": words}


def lucene_query(terms: Sequence[str]) -> str:
    """A full-text query matching any of `terms`: a plain word as it is, anything else
    (a phrase, a hyphenated code) quoted, so the analyzer reads it as a phrase and no
    character of it as query syntax; lower case, so no word is read as an operator."""
    words = [" ".join(t.replace('"', " ").replace("\\", " ").split()).lower() for t in terms]
    return " ".join(w if w.isalnum() else f'"{w}"' for w in words if w)


def fulltext_search(*, scoped: bool) -> str:
    """The nodes whose texts match `$query` in the full-text index `$index`, best first,
    at most `$limit`; `scoped`: of the sessions `$sessions` only."""
    where = " WHERE node.session IN $sessions" if scoped else ""
    return (
        f"CALL db.index.fulltext.queryNodes($index, $query) YIELD node, score{where} "
        "RETURN node.id AS id, score ORDER BY score DESC LIMIT $limit"
    )


def contains_search(*, scoped: bool) -> str:
    """The portable search, for a Bolt server without full-text indexes: the nodes of
    the full-text index's kinds whose texts contain any of `$terms` (lower case),
    scored by how many they contain, at most `$limit`; `scoped`: of `$sessions` only."""
    labels = " OR ".join(f"n:{k.value}" for k in FULLTEXT_KINDS)
    body = " + ' ' + ".join(f"coalesce(n.{p}, '')" for p in FULLTEXT_PROPS)
    where = " AND n.session IN $sessions" if scoped else ""
    return (
        f"MATCH (n:{NODE_LABEL}) WHERE ({labels}){where} WITH n, toLower({body}) AS body "
        "WITH n, size([t IN $terms WHERE body CONTAINS t]) AS score WHERE score > 0 "
        "RETURN n.id AS id, score ORDER BY score DESC, n.seq LIMIT $limit"
    )


def prune_legacy(label: str, stamp: str) -> str:
    """Nodes of an earlier version's call log or cache (`label`), older than `$before`
    (null: all), on property `stamp`."""
    if label not in (LEGACY_CALL_LABEL, LEGACY_CACHE_LABEL) or stamp not in ("at", "created_at"):
        raise ValueError(f"{label}.{stamp} is not a legacy label")
    return (
        f"MATCH (c:{label}) WHERE $before IS NULL OR toString(c.{stamp}) < $before "
        "WITH c LIMIT 10000 DETACH DELETE c RETURN count(*) AS removed"
    )


def lock_claim() -> str:
    """The claim `$key`, made if new (as `$worker`'s until `$expires`), write-locked
    before it is read, so two workers cannot both see it free (Neo4j's lost-update rule)."""
    return (
        f"MERGE (c:{CLAIM_LABEL} {{key: $key}}) "
        "ON CREATE SET c.worker = $worker, c.expires = $expires "
        "SET c.locked = true RETURN c.worker AS worker, c.expires AS expires"
    )


def set_claim() -> str:
    return (
        f"MATCH (c:{CLAIM_LABEL} {{key: $key}}) "
        "SET c.worker = coalesce($worker, c.worker), c.expires = coalesce($expires, c.expires) "
        "REMOVE c.locked"
    )


def release_claim() -> str:
    return f"MATCH (c:{CLAIM_LABEL} {{key: $key, worker: $worker}}) DELETE c"


def ping() -> str:
    return "RETURN 1 AS ok"


def delete_session() -> str:
    """Every node of one session (`$session`) and its relationships; how many nodes."""
    return (
        f"MATCH (n:{NODE_LABEL} {{session: $session}}) WITH n, n.id AS id DETACH DELETE n "
        "RETURN count(id) AS nodes"
    )


def linked_sessions() -> str:
    """The other sessions whose relationships touch a node of `$session`."""
    return (
        f"MATCH (n:{NODE_LABEL} {{session: $session}})-[r]-() WHERE r.session <> $session "
        "RETURN DISTINCT r.session AS session ORDER BY session"
    )


def count_session_relationships() -> str:
    """The relationships touching a node of `$session` (what deleting it removes)."""
    return f"MATCH (n:{NODE_LABEL} {{session: $session}})-[r]-() RETURN count(DISTINCT r) AS edges"


def delete_all() -> str:
    """Every dagmca node and relationship in the database (tests on a scratch database)."""
    return f"MATCH (n:{NODE_LABEL}) DETACH DELETE n"


def show_constraints() -> str:
    return "SHOW CONSTRAINTS"


def _labels(kind: NodeKind, extra: Sequence[str]) -> str:
    bad = [label for label in extra if label not in EXTRA_LABELS]
    if bad:
        raise ValueError(f"label {bad[0]!r} is not in the schema")
    return "".join(f":{label}" for label in (kind.value, *sorted(extra)))


def update_nodes(kind: NodeKind, extra_labels: Sequence[str]) -> list[str]:
    """Statements, run in order, for rows {id, props} stored already: properties
    replaced (keeping `seq`, the creation order), and only the extra labels that
    changed toggled. New nodes are created apart (`create_nodes`) with every label at
    once: some Bolt servers (ArcadeDB) turn a label change into a new record, which
    breaks the id constraint when it happens in the transaction that created the node.
    Rows must have distinct ids."""
    statements = [
        f"UNWIND $rows AS row MATCH (n:{NODE_LABEL} {{id: row.id}}) "
        "WITH n, row, n.seq AS seq SET n = row.props SET n.seq = seq",
    ]
    _labels(kind, extra_labels)  # the whitelist check
    if kind is NodeKind.TENSION:
        for label in sorted(EXTRA_LABELS):
            change = (
                f"NOT n:{label} SET n:{label}" if label in extra_labels else f"n:{label} REMOVE n:{label}"
            )
            statements.append(f"UNWIND $rows AS row MATCH (n:{NODE_LABEL} {{id: row.id}}) WHERE {change}")
    return statements


def existing_nodes() -> str:
    """Which of `$ids` are stored already."""
    return f"UNWIND $ids AS id MATCH (n:{NODE_LABEL} {{id: id}}) RETURN n.id AS id"


def create_nodes(kind: NodeKind, extra_labels: Sequence[str]) -> str:
    """Rows {id, seq, props} known to be new: one plain CREATE each, all labels at once."""
    labels = _labels(kind, extra_labels)
    return f"UNWIND $rows AS row CREATE (n:{NODE_LABEL}{labels}) SET n = row.props, n.seq = row.seq"


def _match_edge(type_: EdgeType) -> str:
    """The stored relationship `r` of each row {source, target, key}."""
    rel = EdgeType(type_).value
    return (
        f"UNWIND $rows AS row MATCH (a:{NODE_LABEL} {{id: row.source}})-[r:{rel}]->(b:{NODE_LABEL}) "
        "WHERE b.id = row.target AND coalesce(r.key, '') = row.key "
    )


def existing_edges(type_: EdgeType) -> str:
    """Which rows {i, source, target, key} of `$rows` are stored already, by `i`."""
    return _match_edge(type_) + "RETURN DISTINCT row.i AS i"


def create_edges(type_: EdgeType) -> str:
    """Rows {source, target, key, seq, props} known to be new; a row whose endpoint is
    missing is not written (the count tells)."""
    rel = EdgeType(type_).value
    return (
        f"UNWIND $rows AS row MATCH (a:{NODE_LABEL} {{id: row.source}}) "
        f"MATCH (b:{NODE_LABEL} {{id: row.target}}) "
        f"CREATE (a)-[r:{rel}]->(b) SET r = row.props, r.seq = row.seq "
        "RETURN count(r) AS written"
    )


def update_edges(type_: EdgeType) -> str:
    """Rows {source, target, key, props} stored already: properties replaced, `seq` kept."""
    return _match_edge(type_) + "WITH r, row, r.seq AS seq SET r = row.props SET r.seq = seq"


def get_node() -> str:
    return f"MATCH (n:{NODE_LABEL} {{id: $id}}) RETURN properties(n) AS props, labels(n) AS labels"


def session_nodes(kind: NodeKind | None) -> str:
    label = f":{kind.value}" if kind is not None else ""
    return (
        f"MATCH (n:{NODE_LABEL}{label} {{session: $session}}) "
        "RETURN properties(n) AS props, labels(n) AS labels ORDER BY n.seq"
    )


def session_edges(type_: EdgeType | None, *, from_outside: bool = False) -> str:
    """A session's relationships in creation order: those from its own nodes, or with
    `from_outside` those from another session's node into it (a later passage that
    supersedes one of its stubs). Every relationship has an end in its own session, so
    the two together are all of them, each found through the indexed `session`."""
    rel = f":{EdgeType(type_).value}" if type_ is not None else ""
    a, b = f"a:{NODE_LABEL}", f"b:{NODE_LABEL} {{session: $session}}"
    if not from_outside:
        a, b = f"a:{NODE_LABEL} {{session: $session}}", f"b:{NODE_LABEL}"
    outside = " AND a.session <> $session" if from_outside else ""
    return (
        f"MATCH ({a})-[r{rel}]->({b}) WHERE r.session = $session{outside} "
        "RETURN a.id AS source, b.id AS target, type(r) AS type, properties(r) AS props ORDER BY r.seq"
    )


def sessions() -> str:
    return (
        f"MATCH (n:{NODE_LABEL}:{NodeKind.SESSION.value}) "
        "RETURN properties(n) AS props, labels(n) AS labels ORDER BY n.seq"
    )


def count_session() -> str:
    return (
        f"MATCH (n:{NODE_LABEL} {{session: $session}}) "
        "OPTIONAL MATCH (n)-[r]-() WHERE r.session = $session "
        "RETURN count(DISTINCT n) AS nodes, count(DISTINCT r) AS edges"
    )
