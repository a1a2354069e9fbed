"""graph-schema.md: the node kinds, relationship types and property values of the graph."""

from __future__ import annotations

from .fields import enum_section, field_rows
from .markdown import HEADER, code, escape, paragraphs, table

# What each relationship type connects, and what it means. The list of types is the
# code's (EdgeType); a type missing here is shown as undocumented and reported.
EDGES: dict[str, tuple[str, str]] = {
    "BRANCHES_FROM": (
        "(branch:Debate)->(parent:Debate)",
        "a branch or revisit debate and the debate it came from",
    ),
    "EXPLORES": ("(branch:Debate)->(t:Tension)", "the tension a branch debates"),
    "MERGES_INTO": ("(x)->(s:Synthesis)", "each converging branch (or synthesis) merged into a synthesis"),
    "SUPERSEDES": (
        "(n)->(stub:Tension)",
        "a node (debate, synthesis, final, or a later passage's Session) whose text answers the stub; "
        "carries the answering sentence as `claim`",
    ),
    "REFERENCES": (
        "(d:Debate)->(other:Debate)",
        "a debate whose turn cited or echoed another debate; `key` is the citing turn, `via` citation or "
        "similarity",
    ),
    "CONTRADICTS": (
        "(later:Debate)->(earlier:Debate)",
        "the judge's `contradict` verdict on two branches, in both orders: `verdicts`, `reason`, "
        "`reason_swapped`",
    ),
    "ELABORATES": (
        "(later:Debate)->(earlier:Debate)",
        "the judge's `elaborate` verdict on two branches, in both orders: `verdicts`, `reason`, "
        "`reason_swapped`",
    ),
    "HAS_ROUND": ("(d:Debate)->(r:Round)", "a debate's rounds"),
    "NEXT": ("(r:Round)->(r2:Round)", "a round and the one after it"),
    "IN_ROUND": ("(t:Turn)->(r:Round)", "the round a turn belongs to"),
    "BY": ("(t:Turn)->(a:Agent)", "the seat that wrote a turn"),
    "REVISES": (
        "(t:Turn)->(t0:Turn)",
        "a lateral revision of an agent's earlier turn, or a re-broadcast goal",
    ),
    "OBSERVES": ("(t:Turn)->(child:Turn)", "a coordinator's observation of its children's turns"),
    "FLAGGED_AT": ("(tension:Tension)->(t:Turn)", "every turn that raised a tension; `key` is the observer"),
    "INTEGRATES": ("(f:Final)->(n)", "what the final answer (or an Integration part) read"),
    "IN_SESSION": ("(d:Debate)->(s:Session)", "every debate's session"),
    "READS": (
        "(d:Debate)->(s:Section)",
        "which sections of a long passage a debate read: `as` map or verbatim",
    ),
    "CHECKED_AGAINST": (
        "(stub:Tension)->(n)",
        "one revisit check of a stub against the node whose arrival triggered it; `key` is the check's index",
    ),
    "PLAYS": ("(seat:Agent)->(p:Persona)", "a session's seat and the persistent agent that plays it"),
    "DUPLICATES": (
        "(dup:Tension)->(twin:Tension)",
        "a stub judged to ask what an earlier open stub asks (always to an earlier one)",
    ),
    "STATED_IN": (
        "(c:Claim)->(text)",
        "a claim and the final, synthesis or debate resolution it was split from",
    ),
    "FIRST_STATED_AT": ("(c:Claim)->(t:Turn)", "a single claim and the earliest turn that states it"),
    "DERIVES_FROM": (
        "(c:Claim)->(text)",
        "the passage (its Session) or an earlier turn, resolution or synthesis the judge found stating "
        "the claim or a part of it, or, for a claim none states, that it follows from: `verdict` (states, "
        "partial or supports), `sentence`, `reason`, `similarity`, `method`",
    ),
    "RAN": (
        "(e:Evaluation)->(s:Session)",
        "an evaluation and each session it ran: `arm`, `task`, `repeat`",
    ),
    "JUDGED_AGAINST": (
        "(f1:Final)->(f2:Final)",
        "a blind pairwise verdict of an evaluation's judge, one per order and criterion: `key`, `verdict`, "
        "`combined` (the verdict over both orders), `order`, `criterion`, `reason`, `eval_id`",
    ),
    "SEEN_IN": (
        "(f:Finding)->(s:Session)",
        "a finding across samples (`dagmca stability`) and each session that reaches it",
    ),
    "AS": (
        "(f:Finding)->(member)",
        "a finding and what it is in one session: a Tension, a Claim of the final answer, or the Final "
        "(its short answer)",
    ),
    "COMPARED_WITH": (
        "(f:Finding)->(other)",
        "two samples' members (tensions, claims or finals) judged in both orders: the finding's `member` "
        "(the earlier sample's; also the `key`) against `other`, with `kind`, `verdict` (match, distinct "
        "or undecided), `reason`, `verdicts`, `reason_swapped`, `similarity`, `method`; a finding's "
        "members are all judged a match, two by two",
    ),
    "ATTEMPTED": (
        "(p:Persona)->(t:Task)",
        "one attempt of a swarm's run at a task: `swarm`, `router`, `repeat`, `position`, `agent`, `type`, "
        "`success`, `ms`, `tokens`, `answer`, `reason`; `key` is the run (swarm/router/repeat)",
    ),
}

SCHEMA_INTRO = """\
This is the contract a user queries, in Neo4j Browser or on the embedded store.

Every node carries its kind as a label (`Session`, `Debate`, ...), a stable `id` (derived
from the session id and the node's place in the session, e.g. `s1/main/r2/L1N3/lateral`),
`session` and `created_at`; in Neo4j every node also has the label `Node` and a `seq`
property (creation order, which the embedded store keeps too), and every relationship a
`session` property. Open stubs carry the extra label `Stub`.

A relationship is one per source, target, type and `key`: the types that can occur more
than once between the same pair carry a `key` that keeps them apart (`FLAGGED_AT`: the
observer; `REFERENCES`: the citing turn; `CHECKED_AGAINST`: the check's index), in every
store and export (in GraphML and GEXF it is `edge_key`). Structured values (the session
config, revisit checks, a persona's record) are JSON strings, so the same graph fits
Neo4j. Timestamps are temporal values in Neo4j and ISO strings in SQLite and in every
export. Relationship types come from one enum, which is also the whitelist of types
Cypher is ever given; every value reaches Cypher as a parameter. A property whose value
is null is not stored (Neo4j drops null properties, and the embedded store does the same).
"""


def page_schema() -> str:
    from dagmca.graph import nodes, schema, status

    out = [HEADER, "# Graph schema\n", SCHEMA_INTRO]
    out.append("## Node kinds\n")
    base_rows = field_rows(nodes.GraphNode)
    out.append("Every kind has these properties:\n")
    out.append(table(["property", "type", "default", "notes"], base_rows))
    for kind in schema.NodeKind:
        model = nodes.NODE_MODELS.get(kind)
        out.append(f"### {kind.value}\n")
        if model is None:
            out.append("_No node model._\n")
            continue
        doc = model.__dict__.get("__doc__")
        if doc:
            out.append(paragraphs(doc) + "\n")
        out.append(
            table(["property", "type", "default", "notes"], field_rows(model, nodes.GraphNode.model_fields))
        )
    out.append("### RevisitCheck\n")
    out.append(
        "One entry of a tension's `revisit_checks` (a JSON string in the graph); each is also a "
        "`CHECKED_AGAINST` relationship.\n"
    )
    out.append(table(["field", "type", "default", "notes"], field_rows(nodes.RevisitCheck)))
    out.append("## Relationship types\n")
    groups = [
        ("Structure", "must form no cycle", [e for e in schema.EdgeType if e in schema.STRUCTURAL_EDGES]),
        ("Relations", "cycles allowed", [e for e in schema.EdgeType if e in schema.RELATION_EDGES]),
        (
            "Provenance and records",
            "",
            [e for e in schema.EdgeType if e not in schema.STRUCTURAL_EDGES | schema.RELATION_EDGES],
        ),
    ]
    for title, note, members in groups:
        out.append(f"### {title}\n")
        if note:
            out.append(f"{note.capitalize()}.\n")
        rows = []
        for member in members:
            pattern, meaning = EDGES.get(
                member.value, ("", "undocumented: add it to EDGES in scripts/gendocs/schema.py")
            )
            rows.append([code(member.value), code(pattern) if pattern else "", escape(meaning)])
        out.append(table(["type", "pattern", "meaning"], rows))
    out.append("## Property values\n")
    for cls in (
        status.SessionStatus,
        status.DebateStatus,
        status.RunStatus,
        schema.DebateOrigin,
        schema.TensionStatus,
        schema.TensionCategory,
        schema.Role,
        schema.Phase,
        schema.CallPhase,
        schema.ModelRole,
        schema.DecisionMethod,
        schema.ClaimOrigin,
        schema.LedgerVerdict,
    ):
        out.append(enum_section(cls))
    return "\n".join(out)


def undocumented_edges() -> list[str]:
    from dagmca.graph import schema

    return sorted(e.value for e in schema.EdgeType if e.value not in EDGES)
