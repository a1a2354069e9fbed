"""`dagmca` — settings are resolved here, once: flag > DAGMCA_* environment > default."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from pydantic import ValidationError
from rich.console import Console
from typer.exceptions import TyperException

from dagmca.config import SessionConfig
from dagmca.errors import EndpointError, UserError
from dagmca.models import NodeRecord
from dagmca.store import DEFAULT_STORE, open_existing, open_store, resolve_store
from dagmca.store.base import GraphStore

if TYPE_CHECKING:
    from dagmca.debate.state import SessionState
    from dagmca.llm.metered import MeteredLLM
from dagmca.store.neo4j import is_bolt_uri

app = typer.Typer(
    name="dagmca",
    help="Turn a text passage into a DAG of LLM debates stored in a graph database.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
db_app = typer.Typer(help="Store administration.", no_args_is_help=True)
app.add_typer(db_app, name="db")

out = Console()
err = Console(stderr=True)

SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
D = SessionConfig.model_fields


def _default(name: str) -> Any:
    value = D[name].default
    return ",".join(value) if isinstance(value, tuple) else value


def opt(name: str, help_: str, *flags: str) -> Any:
    """An option whose default lives in SessionConfig, overridable by DAGMCA_<NAME>."""
    flag = "--" + name.replace("_", "-")
    return typer.Option(
        None,
        *(flags or (flag,)),
        envvar=f"DAGMCA_{name.upper()}",
        help=f"{help_} (default: {_default(name)})",
        show_default=False,
    )


StoreOpt = typer.Option(
    None, "--store", envvar="DAGMCA_STORE", help="Store file (default: .dagmca/dagmca.db)"
)


# settings whose flag is not the field name
FLAG_NAMES = {"request_timeout_s": "--request-timeout", "agent_timeout_s": "--agent-timeout"}


def build_config(values: dict[str, Any]) -> SessionConfig:
    given = {k: v for k, v in values.items() if v is not None}
    for key in ("perspectives", "observers"):
        if isinstance(given.get(key), str):
            given[key] = tuple(given[key].split(","))
    try:
        return SessionConfig(**given)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]) if first["loc"] else "option"
        flag = FLAG_NAMES.get(field, "--" + field.replace("_", "-"))
        raise UserError(f"{flag}: {first['msg']}", "see `dagmca run --help`") from exc


def _session_or_fail(store: GraphStore, session: str) -> None:
    if not store.has_session(session):
        known = [s.id for s in store.sessions()][-3:]
        hint = f"known: {', '.join(known)}" if known else "the store holds no session yet"
        raise UserError(f"no session {session!r} in {store.location}", f"see `dagmca sessions` ({hint})")


def _reports_dir(location: str, session: str, out_dir: Path | None) -> Path:
    """--out, else sessions/<id>/ beside the embedded store (under .dagmca/ for Neo4j)."""
    root = DEFAULT_STORE.parent if is_bolt_uri(location) else Path(location).parent
    return out_dir or root / "sessions" / session


def _new_session_id(text: str) -> str:
    import hashlib

    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + hashlib.sha256(text.encode()).hexdigest()[:6]


def _stored_config(node: NodeRecord) -> SessionConfig:
    """The settings a session ran with, as its Session node keeps them."""
    try:
        return SessionConfig.model_validate_json(str(node.props["config"]))
    except (KeyError, ValidationError) as exc:
        raise UserError(f"session {node.id} has no usable settings: {exc}") from None


# -- run ------------------------------------------------------------------------------
@app.command()
def run(
    passage: Path = typer.Argument(..., help="UTF-8 text file with the passage to debate."),
    llm: str = opt(
        "llm",
        "LLM backend: local (embedded SmolLM2), openai (any OpenAI-compatible endpoint) "
        "or fake (scripted, offline)",
    ),
    model: str = opt("model", "Model name (openai backend; local uses SmolLM2-135M-Instruct)"),
    base_url: str = opt("base_url", "OpenAI-compatible endpoint URL (also OPENAI_BASE_URL)"),
    store: str = StoreOpt,
    session: str = typer.Option(
        None, "--session", help="Session id (default: generated from time and passage)"
    ),
    out_dir: Path = typer.Option(
        None, "--out", help="Folder for the session's reports (default: sessions/<id>/ beside the store)"
    ),
    protocol: str = opt(
        "protocol",
        "Debate protocol: mca (bottom-up rounds), decompose (the top-down baseline), vote "
        "(MassGen-style answers and votes) or ensemble (independent answers, one vote each)",
    ),
    agents: int = opt("agents", "vote, ensemble: agents (unset: as many as the tree's leaves)"),
    max_new_answers_per_agent: int = opt("max_new_answers_per_agent", "vote: new answers per agent"),
    max_new_answers_total: int = opt(
        "max_new_answers_total", "vote: new answers in all (unset: agents x per agent)"
    ),
    fairness_lead: int = opt("fairness_lead", "vote: answers an agent may get ahead of the slowest"),
    agent_timeout_s: float = opt("agent_timeout_s", "vote: seconds per agent per round", "--agent-timeout"),
    max_vote_rounds: int = opt("max_vote_rounds", "vote: rounds after the first answers"),
    decision_retries: int = opt("decision_retries", "vote, ensemble: re-asks of a mixed or missing decision"),
    cpp: int = opt("cpp", "Children per parent in the agent tree"),
    depth: int = opt("depth", "Levels in the agent tree (1 = a single agent)"),
    rounds: int = opt("rounds", "Maximum rounds per debate"),
    signals: bool = typer.Option(
        None,
        "--signals/--no-signals",
        envvar="DAGMCA_SIGNALS",
        help="Parents send a nudge down each round (default: on)",
    ),
    strange_loops: int = opt("strange_loops", "Self-reflection passes at the root after the last round"),
    convergence: str = opt("convergence", "Convergence measure: jaccard or embedding"),
    convergence_threshold: float = opt("convergence_threshold", "Stop when root outputs are this similar"),
    perspectives: str = opt("perspectives", "Comma-separated leaf perspectives"),
    broadcast: bool = typer.Option(
        None,
        "--broadcast/--no-broadcast",
        envvar="DAGMCA_BROADCAST",
        help="The root states the team's goal before round 1; every prompt carries it (default: off)",
    ),
    self_reflect: bool = typer.Option(
        None,
        "--self-reflect/--no-self-reflect",
        envvar="DAGMCA_SELF_REFLECT",
        help="Each round every agent rates its output 0-1 and may signal its parent (default: off)",
    ),
    max_iterations: int = opt(
        "max_iterations", "Re-broadcasts a debate may make when a critical signal comes up"
    ),
    router: str = opt(
        "router", "Who staffs a branch by tension category: fixed, affinity, random, round-robin, greedy, ucb"
    ),
    router_temperature: float = opt("router_temperature", "Softmax temperature of the affinity router"),
    agent_context_size: int = opt(
        "agent_context_size", "Contributions an agent keeps and sees later; 0: none"
    ),
    success_threshold: float = opt("success_threshold", "Cosine at which a contribution survived its debate"),
    observers: str = opt("observers", "Comma-separated observer lenses"),
    monitor_every: str = opt(
        "monitor_every",
        "Observers check each turn, or each round in one call, or off; auto: round for the local model",
    ),
    urgency_threshold: float = opt("urgency_threshold", "Drop flags below this urgency"),
    strategy: str = opt("strategy", "Selection strategy: diverse, urgent, deep or meta"),
    max_branches: int = opt("max_branches", "Branches per node"),
    max_depth: int = opt("max_depth", "Maximum branch depth (0 = main debate only)"),
    merge_threshold: float = opt("merge_threshold", "Cosine above which finished branches merge"),
    merge_margin: float = opt("merge_margin", "How far above this run's baseline similarity a merge must be"),
    max_revisits: int = opt("max_revisits", "Stubs that may be explored when they become relevant"),
    max_nodes: int = opt("max_nodes", "Cap on the session's nodes: no branch starts that would pass it"),
    max_llm_calls: int = opt("max_llm_calls", "Budget: LLM calls"),
    max_tokens: int = opt("max_tokens", "Budget: tokens"),
    max_cost_usd: float = opt("max_cost_usd", "Budget: cost in USD, from the price flags"),
    price_per_1k_prompt: float = opt("price_per_1k_prompt", "Price of 1,000 prompt tokens, USD"),
    price_per_1k_completion: float = opt("price_per_1k_completion", "Price of 1,000 completion tokens, USD"),
    cache: bool = typer.Option(
        None,
        "--cache/--no-cache",
        envvar="DAGMCA_CACHE",
        help="Answer repeated requests from the store's response cache (default: on)",
    ),
    max_retries: int = opt("max_retries", "Retries of a call on 429, 5xx, timeouts, disconnects, bad bodies"),
    request_timeout_s: float = opt("request_timeout_s", "Per-call timeout, seconds", "--request-timeout"),
    max_turn_tokens: int = opt(
        "max_turn_tokens", "Output cap of one turn, in tokens; unset: 64 local, 256 else"
    ),
    concurrency: int = opt("concurrency", "LLM calls in flight at once, for the whole session"),
    temperature: float = opt("temperature", "Sampling temperature"),
    seed: int = opt("seed", "Seed for sampling"),
    max_passage_bytes: int = opt("max_passage_bytes", "Largest passage accepted"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No live progress; summary only."),
) -> None:
    """Debate a passage: main debate, tensions, branches, merges, stubs, final integration."""
    values = dict(locals())
    for key in ("passage", "store", "session", "out_dir", "quiet"):
        values.pop(key)
    cfg = build_config(values)

    from dagmca.llm.factory import check_backend
    from dagmca.passage import read_passage, title_of

    text = read_passage(passage, cfg.max_passage_bytes)
    check_backend(cfg)
    if session is not None and not SESSION_ID.match(session):
        raise UserError(
            f"session id {session!r} is not valid", "use letters, digits, '.', '_' or '-' (max 64)"
        )
    location = resolve_store(store)
    session_id = session or _new_session_id(text)

    # Everything that can be checked without spending is checked above; now the store.
    graph_store = open_store(location, create=True)
    try:
        graph_store.init_schema()
        if graph_store.has_session(session_id):
            raise UserError(
                f"session {session_id!r} already exists in {graph_store.location}", "choose another --session"
            )
        target = _reports_dir(location, session_id, out_dir)
        _run(cfg, graph_store, text, title_of(text, passage.stem), session_id, target, quiet)
    finally:
        graph_store.close()


Work = Callable[["SessionState", str], Awaitable[Any]]


def _with_session(
    cfg: SessionConfig,
    store: GraphStore,
    text: str,
    session_id: str,
    quiet: bool,
    work: Work,
    *,
    resume: bool = False,
) -> tuple[Any, MeteredLLM]:
    """Start the backend, meter and state for a session, run `work(state, model)`
    under live progress, and turn the ways a run can stop into clear endings."""
    from dagmca.cli.progress import LiveProgress
    from dagmca.debate.state import NoEvents, SessionState
    from dagmca.llm.base import EndpointDown
    from dagmca.llm.factory import open_backend
    from dagmca.llm.metered import Budget, MeteredLLM, Prices
    from dagmca.similarity import SentenceTransformerEmbedder

    backend = open_backend(cfg)
    progress = None if quiet else LiveProgress(err)
    llm = MeteredLLM(
        backend.client,
        concurrency=cfg.concurrency,
        budget=Budget(cfg.max_llm_calls, cfg.max_tokens, cfg.max_cost_usd),
        prices=Prices(cfg.price_per_1k_prompt, cfg.price_per_1k_completion),
        cache=store,
        # A resumed session replays every finished call from the cache, whatever
        # the first run said about reading it.
        read_cache=cfg.cache or resume,
        record=lambda call: store.record_calls([call]),
        session=session_id,
        down_after=cfg.endpoint_down_after,
    )

    async def main() -> Any:
        try:
            await llm.ping()  # pre-flight: a down endpoint fails here, before any cost
            state = SessionState(
                config=cfg,
                session_id=session_id,
                store=store,
                llm=llm,
                embedder=SentenceTransformerEmbedder(),
                passage=text,
                events=progress or NoEvents(),
            )
            if progress is not None:
                progress.meter = llm.meter
            with progress or contextlib.nullcontext():
                return await work(state, backend.model)
        finally:
            await llm.aclose()

    resume_hint = f"`dagmca resume {session_id}` continues it"
    try:
        return asyncio.run(main()), llm
    except KeyboardInterrupt:
        err.print(f"dagmca: interrupted; session {session_id} keeps every finished turn in {store.location}")
        err.print(f"dagmca: {resume_hint} without repeating a finished call")
        raise typer.Exit(130) from None
    except EndpointDown as exc:
        raise EndpointError(str(exc), f"every finished turn is kept; {resume_hint}") from None
    finally:
        backend.stop()


def _run(
    cfg: SessionConfig,
    store: GraphStore,
    text: str,
    title: str,
    session_id: str,
    target: Path,
    quiet: bool,
    *,
    resume: bool = False,
) -> None:
    from dagmca.cli.render import summary_table
    from dagmca.debate.session import run_session

    started = time.monotonic()

    async def work(state: SessionState, model: str) -> Any:
        return await run_session(state, title=title, model=model, out_dir=target)

    result, llm = _with_session(cfg, store, text, session_id, quiet, work, resume=resume)
    m = llm.meter
    s = result.session
    faults = ", ".join(f"{k} {v}" for k, v in sorted(m.faults.items())) or "none"
    out.print(
        summary_table(
            store,
            session_id,
            {
                "status": s.status + (" (resumed)" if resume else ""),
                "store": store.location,
                "reports": str(result.out_dir),
                "model": llm.model,
                "LLM calls": f"{m.calls} made, {m.cache_hits} answered from the cache, {m.failures} failed, "
                f"{m.refused} refused by a budget",
                "retries": f"{m.retries} ({m.repairs} replies repaired); faults seen: {faults}",
                "tokens": f"{m.usage.total:,} ({m.usage.prompt_tokens:,} prompt, of which "
                f"{m.usage.cached_tokens:,} cached by the server; {m.usage.completion_tokens:,} completion)",
                "cost": f"${m.cost_usd:.4f} this run; ${s.cost_usd:.4f} for the session",
                "wall time": f"{time.monotonic() - started:.1f}s",
            },
        )
    )
    if result.final is not None:
        out.print(f"[bold green]Final:[/] {result.final.text}")


@app.command()
def compare(
    passage: Path = typer.Argument(..., help="UTF-8 text file with the passage to debate."),
    protocols: str = typer.Option(
        "mca,decompose,vote",
        "--protocols",
        help="Comma-separated arms: mca, decompose, vote (independent answers and a majority vote, "
        "matched to mca's calls), massgen (--protocol vote), ensemble",
    ),
    llm: str = opt("llm", "LLM backend: local, openai or fake"),
    model: str = opt("model", "Model name (openai backend)"),
    base_url: str = opt("base_url", "OpenAI-compatible endpoint URL"),
    store: str = StoreOpt,
    session: str = typer.Option(
        None, "--session", help="Prefix of the arms' session ids: <prefix>-<protocol> (default: generated)"
    ),
    out_dir: Path = typer.Option(None, "--out", help="Folder for the arms' reports (one subfolder each)"),
    cpp: int = opt("cpp", "Children per parent in the agent tree"),
    depth: int = opt("depth", "Levels in the agent tree"),
    rounds: int = opt("rounds", "Maximum rounds (mca)"),
    signals: bool = typer.Option(None, "--signals/--no-signals", envvar="DAGMCA_SIGNALS"),
    strange_loops: int = opt("strange_loops", "Self-reflection passes at the root"),
    convergence: str = opt("convergence", "Convergence measure: jaccard or embedding"),
    convergence_threshold: float = opt("convergence_threshold", "Stop when root outputs are this similar"),
    perspectives: str = opt("perspectives", "Comma-separated leaf perspectives"),
    max_turn_tokens: int = opt("max_turn_tokens", "Output cap of one turn, in tokens"),
    concurrency: int = opt("concurrency", "LLM calls in flight at once"),
    temperature: float = opt("temperature", "Sampling temperature"),
    seed: int = opt("seed", "Seed for sampling"),
    request_timeout_s: float = opt("request_timeout_s", "Per-call timeout, seconds", "--request-timeout"),
    max_retries: int = opt("max_retries", "Retries of a failed call"),
    max_passage_bytes: int = opt("max_passage_bytes", "Largest passage accepted"),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No live progress."),
) -> None:
    """Run protocols on the same passage, model and seed, and print them side by side.

    Each arm is a stored session with the main debate only (no observers, no branches,
    no cache reads), so the numbers are the protocol's own."""
    values = dict(locals())
    for key in ("passage", "protocols", "store", "session", "out_dir", "as_json", "quiet"):
        values.pop(key)
    from dagmca.cli.compare import ARM_SETTINGS, ARMS, Arm, collect, compare_table, matched_vote
    from dagmca.debate.session import run_session
    from dagmca.llm.factory import check_backend
    from dagmca.passage import read_passage, title_of

    names = [p.strip() for p in protocols.split(",") if p.strip()]
    unknown = [p for p in names if p not in ARMS]
    if unknown:
        raise UserError(f"--protocols: unknown protocol {unknown[0]!r}", f"use some of: {', '.join(ARMS)}")
    if len(names) < 2 or len(set(names)) != len(names):
        raise UserError(
            "--protocols: name two or more different protocols", "e.g. --protocols mca,decompose,vote"
        )
    if "vote" in names and "mca" not in names:
        raise UserError("--protocols: the matched vote arm needs the mca arm", "add mca")
    names.sort(key=lambda p: p != "mca")  # the matched vote arm needs mca's call count first
    configs = {p: build_config({**values, **ARM_SETTINGS, "protocol": ARMS[p]}) for p in names}
    text = read_passage(passage, configs[names[0]].max_passage_bytes)
    check_backend(configs[names[0]])
    if session is not None and not SESSION_ID.match(session):
        raise UserError(f"session id {session!r} is not valid", "use letters, digits, '.', '_' or '-'")
    prefix = session or "compare-" + _new_session_id(text)
    location = resolve_store(store)
    graph_store = open_store(location, create=True)
    arms: list[Arm] = []
    try:
        graph_store.init_schema()
        for name in names:
            if graph_store.has_session(f"{prefix}-{name}"):
                raise UserError(f"session {prefix}-{name!r} already exists", "choose another --session")
        for name in names:
            cfg = configs[name]
            if name == "vote":
                cfg = build_config({**values, **ARM_SETTINGS, **matched_vote(arms[0].report)})
            sid = f"{prefix}-{name}"
            target = _reports_dir(location, sid, out_dir / name if out_dir else None)

            async def work(state: SessionState, model: str, target: Path = target) -> Any:
                title = title_of(text, passage.stem)
                return await run_session(state, title=title, model=model, out_dir=target)

            started = time.monotonic()
            _with_session(cfg, graph_store, text, sid, quiet, work)
            arms.append(collect(graph_store, name, sid, target, time.monotonic() - started))
            if not as_json:
                err.print(f"{name}: session {sid} done in {arms[-1].wall_s:.1f}s")
    finally:
        graph_store.close()
    if as_json:
        print(json.dumps([a.row() for a in arms], indent=2))
    else:
        out.print(compare_table(arms))
        for arm in arms:
            out.print(f"{arm.protocol} report: {arm.report_path}", soft_wrap=True)


@app.command()
def resume(
    session: str = typer.Argument(..., help="Session id."),
    store: str = StoreOpt,
    out_dir: Path = typer.Option(None, "--out", help="Folder for the session's reports"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No live progress; summary only."),
) -> None:
    """Finish a session that was killed, interrupted or stopped: every finished call is
    replayed from the cache, the rest is asked, with the session's own settings."""
    from dagmca.llm.factory import check_backend

    location = resolve_store(store)
    with open_existing(location) as st:
        _session_or_fail(st, session)
        node = st.get_node(session)
        assert node is not None
        status = str(node.props.get("status", ""))
        if status == "done":
            out.print(f"session {session} is already done; nothing to resume")
            return
        cfg = _stored_config(node)
        check_backend(cfg)
        target = _reports_dir(location, session, out_dir)
        text, title = str(node.props["passage"]), str(node.props.get("title", session))
        _run(cfg, st, text, title, session, target, quiet, resume=True)


# -- reading commands -------------------------------------------------------------------
@app.command()
def sessions(store: str = StoreOpt) -> None:
    """List the sessions in the store."""
    from rich.table import Table

    with open_existing(resolve_store(store)) as st:
        table = Table("session", "title", "status", "started", "LLM calls", "tokens")
        for s in st.sessions():
            p = s.props
            table.add_row(
                s.id,
                str(p.get("title", "")),
                str(p.get("status", "")),
                str(p.get("started_at", ""))[:16].replace("T", " "),
                str(p.get("llm_calls", 0)),
                str(p.get("tokens", 0)),
            )
        out.print(table)


@app.command()
def show(session: str = typer.Argument(..., help="Session id."), store: str = StoreOpt) -> None:
    """Print a session as a tree: debates, tensions, branches, syntheses, final."""
    from dagmca.cli.render import session_tree

    with open_existing(resolve_store(store)) as st:
        _session_or_fail(st, session)
        out.print(session_tree(st, session))


@app.command()
def export(
    session: str = typer.Argument(..., help="Session id."),
    format_: str = typer.Option(
        "json",
        "--format",
        "-f",
        help="json (node-link), graphml, gexf, cypher, mermaid, dot or html (offline viewer).",
    ),
    output: Path = typer.Option(None, "--output", "-o", help="Output file (default: <session>.<extension>)"),
    store: str = StoreOpt,
) -> None:
    """Export a session for visualization and other tools."""
    from dagmca.export.formats import EXTENSIONS, WRITERS

    if format_ not in WRITERS:
        raise UserError(f"unknown export format {format_!r}", f"use one of: {', '.join(WRITERS)}")
    with open_existing(resolve_store(store)) as st:
        _session_or_fail(st, session)
        nodes, edges = st.nodes(session), st.edges(session)
    text = WRITERS[format_](session, nodes, edges)
    target = output or Path(f"{session.replace('/', '_')}.{EXTENSIONS[format_]}")
    target.write_text(text, encoding="utf-8")
    out.print(f"wrote {target} ({format_}: {len(nodes)} nodes, {len(edges)} edges)")


@app.command()
def status(
    session: str = typer.Argument(..., help="Session id."),
    store: str = StoreOpt,
    out_dir: Path = typer.Option(None, "--out", help="The session's report folder, if it ran with --out"),
    as_json: bool = typer.Option(False, "--json", help="Print status.json as it is"),
) -> None:
    """Where a session is: phase, active debates and their rounds, agents, calls, tokens,
    cost, elapsed time, last event. Reads the session's status.json, so it works while
    another process runs the session."""
    from dagmca.cli.render import status_table

    folder = _reports_dir(resolve_store(store), session, out_dir)
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


@app.command()
def metrics(
    session: str = typer.Argument(..., help="Session id."),
    store: str = StoreOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the metrics as JSON"),
) -> None:
    """Emergence metrics (DESIGN §5), computed from the stored graph: per debate, lateral
    revision, sibling similarity (collapse alarm > 0.8), answer length (bloat alarm),
    root novelty; per session, specialization S, context divergence D, functional
    differentiation F (chi-square of agent x tension category, with p), cost per node."""
    from dagmca.cli.render import metrics_tables
    from dagmca.metrics.session import session_metrics
    from dagmca.similarity import SentenceTransformerEmbedder

    with open_existing(resolve_store(store)) as st:
        _session_or_fail(st, session)
        m = session_metrics(st, session, SentenceTransformerEmbedder())
    if as_json:
        print(m.model_dump_json(indent=2))
        return
    for table in metrics_tables(m):
        out.print(table)


@app.command()
def check(session: str = typer.Argument(..., help="Session id."), store: str = StoreOpt) -> None:
    """Check the invariants of DESIGN §6. Exit 0 when they hold, 1 with the broken ones."""
    from dagmca.store.check import check_store

    with open_existing(resolve_store(store)) as st:
        _session_or_fail(st, session)
        problems = check_store(st, session)
        counts = (len(st.nodes(session)), len(st.edges(session)))
    if problems:
        for p in problems:
            out.print(f"[red]broken:[/] {p}")
        raise typer.Exit(1)
    out.print(f"ok: {counts[0]} nodes, {counts[1]} edges; every invariant holds")


@app.command()
def revisit(
    session: str = typer.Argument(..., help="Session id."),
    passage: Path = typer.Option(
        None, "--passage", help="New context: a passage to check the open stubs against (default: the final)"
    ),
    store: str = StoreOpt,
    out_dir: Path = typer.Option(None, "--out", help="Folder for the session's reports"),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No live progress; summary only."),
) -> None:
    """Later, with new context: re-check a finished session's open stubs, explore the
    relevant ones into the same DAG, and integrate again."""
    from dagmca.debate.session import revisit_session
    from dagmca.llm.factory import check_backend
    from dagmca.passage import read_passage

    location = resolve_store(store)
    with open_existing(location) as st:
        _session_or_fail(st, session)
        node = st.get_node(session)
        assert node is not None
        cfg = _stored_config(node)
        new_text = read_passage(passage, cfg.max_passage_bytes) if passage is not None else None
        check_backend(cfg)
        final = st.get_node(f"{session}/final")
        context = new_text or str(final.props.get("text", "")) if final else new_text or ""
        if not context:
            raise UserError(f"session {session} has no final answer to revisit against", "pass --passage")
        target = _reports_dir(location, session, out_dir)

        async def work(state: SessionState, model: str) -> Any:
            return await revisit_session(state, context=context, out_dir=target)

        text = new_text or str(node.props["passage"])
        result, llm = _with_session(cfg, st, text, session, quiet, work)
        out.print(
            f"revisited {session}: {result.checked} open stubs checked against "
            f"{'the new passage' if new_text else 'the final answer'}; {len(result.superseded)} superseded, "
            f"{len(result.explored)} explored ({', '.join(result.explored) or 'none'}); "
            f"{llm.meter.calls} LLM calls"
        )
        if result.final is not None and (result.explored or result.superseded):
            out.print(f"[bold green]Final (integrated again):[/] {result.final.text}")


@app.command()
def doctor(
    llm: str = opt("llm", "LLM backend to check: local, openai or fake"),
    model: str = opt("model", "Model name to check"),
    base_url: str = opt("base_url", "OpenAI-compatible endpoint URL (also OPENAI_BASE_URL)"),
    store: str = StoreOpt,
) -> None:
    """Check that a run can start: Python, the embedding model, the store, the LLM
    endpoint and model. Exit 0 when all are fine, 1 otherwise."""
    from rich.table import Table

    from dagmca.doctor import run_checks

    cfg = build_config({"llm": llm, "model": model, "base_url": base_url})
    results = run_checks(cfg, resolve_store(store))
    table = Table("check", "", "detail", title="dagmca doctor", title_justify="left")
    for c in results:
        table.add_row(c.name, "[green]ok[/]" if c.ok else "[red]FAIL[/]", c.detail)
    out.print(table)
    if not all(c.ok for c in results):
        raise typer.Exit(1)


@db_app.command("init")
def db_init(store: str = StoreOpt) -> None:
    """Create the store's schema. Safe to run twice."""
    with open_store(resolve_store(store), create=True) as st:
        st.init_schema()
        out.print(f"initialised {st.location}")


@app.command()
def push(
    session: str = typer.Argument(..., help="Session id."),
    to: str = typer.Option(
        None,
        "--to",
        help="Target store, e.g. bolt://localhost:7687 (default: NEO4J_URI).",
        show_default=False,
    ),
    store: str = StoreOpt,
) -> None:
    """Copy a session from the embedded store into Neo4j (or any store). Idempotent."""
    from dagmca.store.push import push_session

    target_location = to or os.environ.get("NEO4J_URI")
    if not target_location:
        raise UserError("push needs a target", "pass --to bolt://host:7687 or set NEO4J_URI")
    source_location = store or os.environ.get("DAGMCA_STORE") or str(DEFAULT_STORE)
    with open_existing(source_location) as src:
        _session_or_fail(src, session)
        with open_store(target_location, create=True) as dst:
            if dst.location == src.location:
                raise UserError("push source and target are the same store", "pass another --to")
            dst.init_schema()
            nodes, edges = push_session(src, dst, session)
            out.print(f"pushed {session}: {nodes} nodes, {edges} edges from {src.location} to {dst.location}")


@app.command()
def query(
    cypher_text: str = typer.Argument(
        ..., metavar="CYPHER", help="A Cypher query; use $name for parameters."
    ),
    param: list[str] = typer.Option(
        [], "--param", "-p", help="A parameter, name=value (value read as JSON when it parses). Repeatable."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the rows as JSON."),
    write: bool = typer.Option(False, "--write", help="Allow a query that writes."),
    store: str = StoreOpt,
) -> None:
    """Run Cypher against a Neo4j store and print the rows. Read-only unless --write."""
    from dagmca.cli.render import rows_table
    from dagmca.store.neo4j import Neo4jStore
    from dagmca.store.query import parse_params, records_to_rows, write_clause

    params = parse_params(param)
    clause = write_clause(cypher_text)
    if clause and not write:
        raise UserError(f"the query writes ({clause}) and queries are read-only", "pass --write to allow it")
    location = resolve_store(store)
    if not is_bolt_uri(location):
        raise UserError(
            f"query runs Cypher, and {location} is the embedded store",
            "pass --store bolt://host:7687 (copy a session there with `dagmca push`)",
        )
    import neo4j.exceptions

    with open_store(location) as st:
        assert isinstance(st, Neo4jStore)
        try:
            keys, rows = records_to_rows(st.run_query(cypher_text, params, write=write))
        except neo4j.exceptions.Neo4jError as exc:
            raise UserError(f"the server rejected the query: {exc.message or exc.code}") from None
    if as_json:
        print(json.dumps(rows, indent=2, ensure_ascii=False, default=str))
        return
    out.print(rows_table(keys, rows))
    err.print(f"{len(rows)} row(s)")


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors are one line and an exit code, never a traceback."""
    command = typer.main.get_command(app)
    try:
        # standalone_mode=False: click returns a raised Exit's code instead of exiting.
        returned = command.main(args=argv, prog_name="dagmca", standalone_mode=False)
    except UserError as exc:
        err.print(f"dagmca: error: {exc.line()}", markup=False, highlight=False, soft_wrap=True)
        return exc.exit_code
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        err.print("dagmca: aborted")
        return 130
    except TyperException as exc:  # typer's (vendored click) usage errors
        message = exc.format_message()
        if type(exc).__name__ == "NoArgsIsHelpError":
            out.print(message, markup=False, highlight=False)
            return 2
        ctx = getattr(exc, "ctx", None)
        hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
        err.print(f"dagmca: error: {message}{hint}", markup=False, highlight=False, soft_wrap=True)
        return int(getattr(exc, "exit_code", 2))
    return returned if isinstance(returned, int) else 0


if __name__ == "__main__":
    sys.exit(main())
