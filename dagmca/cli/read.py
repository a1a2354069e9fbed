"""The commands that read a store and spend nothing: sessions, show, status, metrics,
check, export and query. Each imports what only it needs (exports, metrics, the
Cypher client) inside itself, so the others start fast."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.table import Table

from dagmca.cli import options as o
from dagmca.cli.console import err, noted, out
from dagmca.cli.render import across_table, metrics_tables, rows_table, session_tree, status_table
from dagmca.errors import UserError
from dagmca.graph import EVALUATION_SESSION, FINDINGS_SESSION, EdgeRecord, EdgeType, NodeKind
from dagmca.store import open_existing, open_store, require_session, resolve_store
from dagmca.store.base import GraphStore
from dagmca.store.networkx_view import session_records, store_records
from dagmca.store.target import is_bolt_uri

MaybeSession = Annotated[str | None, typer.Argument(help="Session id (or --all).")]
All = Annotated[bool, typer.Option("--all", help="Every session of the store, as one graph.")]


def _chosen(st: GraphStore, session: str | None, all_: bool) -> list[str]:
    """The sessions a reading command covers: the one named, or with --all every one."""
    if all_ == (session is not None):
        raise UserError("give a session id or --all (not both)", "see `dagmca sessions` for the ids")
    if session is not None:
        require_session(st, session)
        return [session]
    found = [s.id for s in st.sessions()]
    if not found:
        raise UserError(f"no session in {st.location}", "run `dagmca run` or `dagmca build` first")
    return found


def _is_study(st: GraphStore, name: str) -> bool:
    """Whether `name` is a study's id (`dagmca stability`) rather than a session's."""
    from dagmca.store.findings import study_findings

    return not st.has_session(name) and bool(study_findings(st, name))


def sessions(
    store: o.Store = None,
    all_: Annotated[bool, typer.Option("--all", help="List the sessions evals ran too.")] = False,
    of_eval: Annotated[
        str | None, typer.Option("--eval", metavar="EVAL_ID", help="List the sessions one eval ran, alone.")
    ] = None,
) -> None:
    """List the sessions in the store: those you ran; an eval's many sessions only with
    --all, or one eval's with --eval."""
    with open_existing(resolve_store(store)) as st:
        ran = eval_sessions(st)
        if of_eval is not None and of_eval not in ran.values():
            known = sorted(set(ran.values()))[-3:]
            raise UserError(
                f"no eval {of_eval!r} in {st.location}", f"evals there: {', '.join(known) or 'none'}"
            )
        rows = []
        hidden = 0
        for s in st.sessions():
            owner = ran.get(s.id)
            if (of_eval is not None and owner != of_eval) or (
                of_eval is None and not all_ and owner is not None
            ):
                hidden += owner is not None
                continue
            p = s.props
            rows.append({
                "session": s.id,
                "status": str(p.get("status", "")),
                "started": str(p.get("started_at", ""))[:16].replace("T", " "),
                "LLM calls": str(p.get("llm_calls", 0)),
                "tokens": str(p.get("tokens", 0)),
                "title": str(p.get("title", "")),
            })  # fmt: skip
        out.print(sessions_table(rows, out.width))
    if hidden and of_eval is None:
        evals = len(set(ran.values()))
        noted(f"dagmca: {hidden} sessions of {evals} evals not listed: --all lists them, --eval EVAL_ID one "
            "eval's")  # fmt: skip


def eval_sessions(st: GraphStore) -> dict[str, str]:
    """Each session an eval ran (its RAN edges, a vote's samples among them) and the eval."""
    return {
        e.target: e.source.removesuffix("/evaluation") for e in st.edges(EVALUATION_SESSION, EdgeType.RAN)
    }


# what a narrow terminal keeps, most needed first; an id is what a user copies into the
# next command, so it is never cut or wrapped: the columns after it give way instead
# A query's time limit at the terminal unless --timeout says otherwise: long enough for
# any query the cookbook holds on a large store, short enough that a runaway pattern
# (a cartesian product) ends with a line instead of holding a core for good.
QUERY_TIMEOUT = 60.0
_SESSION_COLUMNS = ("session", "status", "started", "LLM calls", "tokens", "title")
_MIN_TITLE = 12


def sessions_table(rows: list[dict[str, str]], width: int) -> Table:
    kept: dict[str, int] = {}  # column -> the width it needs
    used = 1  # the table's left border
    for name in _SESSION_COLUMNS:
        wanted = max([len(name), *(len(r[name]) for r in rows)])
        if name == "title":
            wanted = min(wanted, _MIN_TITLE)
        if kept and used + wanted + 3 > width:
            break
        kept[name] = wanted
        used += wanted + 3  # padding and border
    table = Table()
    for name, wanted in kept.items():
        if name == "title":
            table.add_column(name, overflow="ellipsis", no_wrap=True)
        else:
            justify: Literal["left", "right"] = "right" if name in ("LLM calls", "tokens") else "left"
            table.add_column(name, no_wrap=True, justify=justify, min_width=wanted)
    for r in rows:
        table.add_row(*(r[name] for name in kept))
    return table


def show(session: MaybeSession = None, store: o.Store = None, all_: All = False) -> None:
    """Print a session as a tree: debates, tensions, branches, syntheses, final. With
    --all, every session of the store and the relationships between them."""
    with open_existing(resolve_store(store)) as st:
        for sid in _chosen(st, session, all_):
            out.print(session_tree(st, sid))
        if all_:
            out.print(across_table(st))


Format = Annotated[
    str,
    typer.Option(
        "--format",
        "-f",
        help="json (node-link), graphml, gexf, cypher, mermaid, dot or html (offline viewer).",
    ),
]
Output = Annotated[
    Path | None, typer.Option("--out", "-o", help="Output file (default: <session>.<extension>)")
]
# the option's name before it was --out, as every command names where its output goes
OldOutput = Annotated[Path | None, typer.Option("--output", hidden=True)]


def export(
    session: MaybeSession = None,
    format_: Format = "json",
    output: Output = None,
    store: o.Store = None,
    all_: All = False,
    old_output: OldOutput = None,
) -> None:
    """Export a session (or with --all the whole store) for visualization and other tools.
    SESSION may also be a study's id (`dagmca stability`): its findings, with the
    sessions and members they reach."""
    if output is not None and old_output is not None:
        raise UserError("--out and --output both given", "give --out (--output is its old name)")
    output = output or old_output
    from dagmca.export.formats import EXTENSIONS, WRITERS
    from dagmca.store.findings import study_records

    if format_ not in WRITERS:
        raise UserError(f"unknown export format {format_!r}", f"use one of: {', '.join(WRITERS)}")
    with open_existing(resolve_store(store)) as st:
        if session is not None and not all_ and _is_study(st, session):
            name = session
            nodes, edges = study_records(st, session)
        else:
            name = _chosen(st, session, all_)[0] if not all_ else "all"
            nodes, edges = store_records(st) if all_ else session_records(st, name)
    text = WRITERS[format_](name, nodes, edges)
    target = output or Path(f"{name.replace('/', '_')}.{EXTENSIONS[format_]}")
    target.write_text(text, encoding="utf-8")
    out.print(f"wrote {target} ({format_}: {len(nodes)} nodes, {len(edges)} edges)")


def status(
    session: o.SessionArg,
    store: o.Store = None,
    out_dir: Annotated[
        Path | None, typer.Option("--out", help="The session's report folder, if it ran with --out")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print status.json as it is")] = False,
) -> None:
    """Where a session is: phase, active debates and their rounds, agents, calls, tokens,
    cost, elapsed time, last event. Reads the session's status.json, so it works while
    another process runs the session."""
    from dagmca.workspace.stored import reports_dir

    folder = reports_dir(resolve_store(store), session, out_dir)
    path = folder / "status.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(
            f"no status for session {session!r} in {folder}", "check the id, or pass --out if it ran with one"
        ) from None
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read {path}: {exc}") from None
    if as_json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return
    out.print(status_table(data))


def metrics(
    session: o.SessionArg,
    store: o.Store = None,
    as_json: o.AsJSON = False,
    reference: Annotated[
        str | None,
        typer.Option(
            "--reference",
            help="The right answer of a question session: its answer changes are then counted as "
            "right-to-wrong and wrong-to-right flips.",
        ),
    ] = None,
    scoring: Annotated[
        Literal["exact", "numeric", "choice"] | None,
        typer.Option(
            "--scoring",
            help="How answers are read, as `eval` scores a task: exact (normalised text; a number "
            "matched as a number), numeric (within --tolerance), choice (a choice's letter or text, "
            "with --choice). Default: choice with --choice, else exact.",
        ),
    ] = None,
    choices: Annotated[
        list[str] | None,
        typer.Option("--choice", help="A choice of a choice question, in order (A, B, ...); repeat it."),
    ] = None,
    tolerance: Annotated[
        float | None, typer.Option("--tolerance", min=0.0, help="--scoring numeric: relative tolerance")
    ] = None,
) -> None:
    """Emergence metrics, computed from the stored graph: per debate, lateral
    revision, sibling similarity (collapse alarm > 0.8), answer length (bloat alarm),
    root novelty; per session, specialization S, context divergence D, functional
    differentiation F (chi-square of agent x tension category, with p), cost per node;
    in a question session, the answers per round, their changes, the lateral turns
    whose stance line says the opposite of what their answer did and (with --reference)
    their flips, the answers read as `eval` scores them."""
    from dagmca.metrics.answers import Reading
    from dagmca.metrics.session import session_metrics
    from dagmca.scoring import DEFAULT_TOLERANCE, parse_number
    from dagmca.similarity.choose import make_embedder

    rule = scoring or ("choice" if choices else "exact")
    if rule == "choice" and not choices:
        raise UserError("--scoring choice needs the choices", "give each with --choice, in order")
    if rule == "numeric" and reference is not None and parse_number(reference) is None:
        raise UserError(f"--scoring numeric needs a number as --reference, not {reference!r}")
    tol = DEFAULT_TOLERANCE if tolerance is None else tolerance
    reading = Reading(rule=rule, choices=choices or None, tolerance=tol)

    with open_existing(resolve_store(store)) as st:
        settings = json.loads(str(require_session(st, session).props.get("config") or "{}"))
        # the embedder the session ran with, so its figures are the run's own (sessions
        # stored before the setting existed ran on MiniLM)
        embedder = make_embedder(settings.get("embedder", "minilm"))
        try:
            m = session_metrics(st, session, embedder, reference, reading)
        finally:
            embedder.close()
        findings = st.nodes(FINDINGS_SESSION, NodeKind.FINDING)
        if findings:  # a sample of a study: what of it recurs (the Wilson interval is the evaluation's)
            from dagmca.stability.measures import session_recurrence

            m = m.model_copy(update={"recurrence": session_recurrence(findings, session)})
    if as_json:
        print(m.model_dump_json(indent=2))
        return
    for table in metrics_tables(m):
        out.print(table)


def check(session: o.SessionArg, store: o.Store = None) -> None:
    """Check the graph schema's invariants. Exit 0 when they hold, 1 with the broken ones.
    SESSION may also be a swarm's id (`swarm-...`): its Swarm, Task and ATTEMPTED records;
    an eval's id: its Evaluation, RAN and JUDGED_AGAINST records; a judge check's id; or a
    study's (`dagmca stability`): its Finding nodes and their relationships."""
    from dagmca.store.check import check_evaluation, check_store
    from dagmca.store.findings import study_records

    with open_existing(resolve_store(store)) as st:
        if session.startswith("swarm-") and st.get_node(f"swarm/{session}") is not None:
            from dagmca.swarm.graph import check_swarm, swarm_counts

            problems, counts = check_swarm(st, session), swarm_counts(st, session)
        elif st.get_node(f"{session}/evaluation") is not None:
            problems = check_evaluation(st, session)
            counts = (1, sum(1 for e in st.edges(EVALUATION_SESSION) if _of_eval(e, session)))
        elif (found := st.get_node(session)) is not None and found.kind is NodeKind.JUDGE_CHECK:
            from dagmca.evaluation.judgecheck.graph import check_judge_check

            problems, counts = check_judge_check(st, session), (1, 0)
        elif _is_study(st, session):
            from dagmca.store.findings_check import check_findings

            nodes, edges = study_records(st, session)
            problems, counts = check_findings(st, session), (len(nodes), len(edges))
        else:
            require_session(st, session)
            problems = check_store(st, session)
            counts = (len(st.nodes(session)), len(st.edges(session)))
    if problems:
        for p in problems:
            out.print(f"[red]broken:[/] {p}")
        raise typer.Exit(1)
    out.print(f"ok: {counts[0]} nodes, {counts[1]} edges; every invariant holds")


def _of_eval(e: EdgeRecord, eval_id: str) -> bool:
    return e.source == f"{eval_id}/evaluation" or e.props.get("eval_id") == eval_id


def query(
    cypher_text: Annotated[
        str, typer.Argument(metavar="CYPHER", help="A Cypher query; use $name for parameters.")
    ],
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param", "-p", help="A parameter, name=value (value read as JSON when it parses). Repeatable."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON.")] = False,
    write: Annotated[bool, typer.Option("--write", help="Allow a query that writes.")] = False,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            min=0,
            metavar="SECONDS",
            help="Stop the query after this long (0: no limit); on Neo4j, the transaction's timeout.",
        ),
    ] = QUERY_TIMEOUT,
    store: o.Store = None,
) -> None:
    """Run Cypher against the store and print the rows. On Neo4j read-only unless
    --write; the embedded store answers read-only Cypher itself (no server needed)."""
    from dagmca.store.query import parse_params, write_clause

    params = parse_params(param or [])
    clause = write_clause(cypher_text)
    location = resolve_store(store)
    if not is_bolt_uri(location):
        if write:
            raise UserError(
                "--write needs a Neo4j store: the embedded store's Cypher only reads",
                "push the session to Neo4j (`dagmca push`) and write there",
            )
        if clause:
            raise UserError(
                f"the query writes ({clause}) and the embedded store's Cypher only reads",
                "push the session to Neo4j (`dagmca push`) to write with --write",
            )
        from dagmca.store.embedded import query as embedded_query

        with open_existing(location) as st:
            keys, rows = embedded_query(st, cypher_text, params, timeout=timeout or None)
    else:
        if clause and not write:
            raise UserError(
                f"the query writes ({clause}) and queries are read-only", "pass --write to allow it"
            )
        keys, rows = _bolt_query(location, cypher_text, params, write=write, timeout=timeout or None)
    if as_json:
        print(json.dumps(rows, indent=2, ensure_ascii=False, default=str))
        return
    out.print(rows_table(keys, rows))
    err.print(f"{len(rows)} row(s)")


def _bolt_query(
    location: str, text: str, params: dict[str, Any], *, write: bool, timeout: float | None
) -> tuple[list[str], list[Any]]:
    from dagmca.store.neo4j import Neo4jStore
    from dagmca.store.query import bolt_rows

    with open_store(location) as st:
        assert isinstance(st, Neo4jStore)
        return bolt_rows(st, text, params, write=write, timeout=timeout)
