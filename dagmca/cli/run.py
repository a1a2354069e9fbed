"""`dagmca run`, `resume` and `revisit`: the commands that spend LLM calls on a session.

The pipeline (`dagmca.workspace` and all below it) is imported inside the commands, so
that `dagmca --help` and the reading commands start without loading it."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.markup import escape

from dagmca.api import RunResult, Workspace
from dagmca.api.sync import in_workspace
from dagmca.cli import options as o
from dagmca.cli.console import err, noted, out, said
from dagmca.cli.progress import Noted, progress
from dagmca.cli.render import citations_row, claims_row, role_calls_text
from dagmca.cli.summary import (
    convergence_row,
    degenerate_count,
    fitting_rows,
    guard_row,
    ledger_row,
    projection_row,
    projection_table,
    summary_table,
)
from dagmca.cli.verdicts import Verdicts
from dagmca.config import SessionConfig
from dagmca.config.session import BUDGETS
from dagmca.debate.estimate import Projection, as_json, project, role_pricing
from dagmca.errors import Interrupted, SessionDone, SettingsError, UserError
from dagmca.graph import NodeRecord
from dagmca.llm.factory import check_backend, model_name
from dagmca.llm.prices import resolve_prices
from dagmca.metrics.citations import citations
from dagmca.metrics.ledger import arm_shares
from dagmca.passage import MAX_QUESTION_BYTES, check_text, read_passage, title_of
from dagmca.store import open_existing, open_store, require_session, resolve_store
from dagmca.store.base import GraphStore

T = TypeVar("T")
DEGRADED_EXIT = o.DEGRADED_EXIT

DryRun = Annotated[
    bool,
    typer.Option(
        "--dry-run", help="Print the projected calls, tokens and cost (as `estimate`); spend nothing."
    ),
]


def projection(cfg: SessionConfig, text: str, asked: bool = False) -> Projection:
    model = model_name(cfg)
    return project(cfg, text, resolve_prices(cfg, model), model, role_pricing(cfg), asked=asked)


def show_projection(cfg: SessionConfig, text: str, json_out: bool, asked: bool = False) -> None:
    p = projection(cfg, text, asked)
    if json_out:
        out.print_json(json.dumps(as_json(p)))
    else:
        out.print(projection_table(p, model_name(cfg)))


def read_question(question: str | None, question_file: Path | None) -> str | None:
    """--question, or the text of --question-file; not both."""
    if question is not None and question_file is not None:
        raise UserError("--question and --question-file both given", "give one of them")
    if question_file is not None:
        return read_passage(question_file, MAX_QUESTION_BYTES)
    return check_text(question, MAX_QUESTION_BYTES, "question") if question is not None else None


@o.with_settings()
def run(
    cfg: SessionConfig,
    passage: o.OptionalPassageArg = None,
    question: o.Question = None,
    question_file: o.QuestionFile = None,
    store: o.Store = None,
    session: o.SessionId = None,
    out_dir: o.OutDir = None,
    quiet: o.Quiet = False,
    dry_run: DryRun = False,
    samples: o.Samples = 1,
    vary: o.Vary = "seed",
    models: o.Models = None,
    temperatures: o.Temperatures = None,
    study: o.StudyId = None,
    candidates: o.Candidates = 3,
) -> None:
    """Debate a passage, or a question about one (or alone): main debate, tensions,
    branches, merges, stubs, final integration. With a question, the final answer
    leads with its short answer; with --samples N, N sessions and what recurs."""
    asked = read_question(question, question_file)
    if passage is None and asked is None:
        raise UserError("nothing to debate", "give a PASSAGE file, --question, or both")
    text = read_passage(passage, cfg.max_passage_bytes) if passage is not None else ""
    if samples == 1 and (vary != "seed" or models or temperatures):
        raise UserError("--vary, --models and --temperatures are for several samples", "add --samples N")
    if samples > 1 or study is not None:
        from dagmca.cli import samples as sampled

        if session is not None or out_dir is not None:
            raise UserError("--session and --out name one session", "with --samples, give --study instead")
        plan = sampled.plan_of(samples, vary, models, temperatures, study, candidates)
        if dry_run:
            sampled.show_dry_run(cfg, plan, projection(cfg, text, asked is not None))
            return
        sampled.run_samples(cfg, text, asked, plan, resolve_store(store), quiet)
        return
    if dry_run:  # nothing is spent: no key or endpoint needed
        show_projection(cfg, text, json_out=False, asked=asked is not None)
        return
    check_backend(cfg)
    from dagmca.workspace import stored as by_id

    o.check_session_id(session)
    location = resolve_store(store)
    session_id = session or by_id.new_session_id(text or asked or "")

    # Everything that can be checked without spending is checked above; now the store.
    with open_store(location, create=True) as graph_store:
        graph_store.init_schema()
        target = by_id.reports_dir(location, session_id, out_dir)
        title = title_of(asked or text, passage.stem if passage is not None else session_id)
        started = time.monotonic()
        # --quiet prints nothing before the run, so its projection is made for the summary
        # after it: counting the passage loads the tokenizer, which need not delay the
        # first request
        projected = None if quiet else projection(cfg, text, asked is not None)
        if projected is not None:
            announce(projected)
        display = Verdicts(None if quiet else progress(err))
        result = in_session(
            graph_store,
            session_id,
            lambda ws: ws.run(
                text or None,
                question=asked,
                settings=cfg,
                session=session_id,
                title=title,
                events=display,
                out_dir=target,
            ),
            cfg.embedder,
        )
        if projected is None:
            projected = projection(cfg, text, asked is not None)
        summarize(result, graph_store, cfg, projected, started, judged=display)


def announce(p: Projection) -> None:
    """A run's projected calls and cost, on stdout with the summary (stderr is for what
    went wrong)."""
    said(
        f"projected: {p.calls.min:,.0f}-{p.calls.max:,.0f} calls, "
        f"${p.cost_usd.min:.4f}-${p.cost_usd.max:.4f} (`dagmca estimate` for the detail)"
    )


def in_session(
    store: GraphStore, session_id: str, work: Callable[[Workspace], Awaitable[T]], embedder: str | None = None
) -> T:
    """`work` on a workspace around the open store, with the embedder of that name (None:
    $DAGMCA_EMBEDDER's, else the default); Ctrl-C is an Interrupted naming the session
    (every finished turn is kept), and a setting the workspace refused a value of is
    named by its flag (the command's options are the settings it was given)."""
    try:
        return in_workspace(store, work, embedder=embedder)
    except KeyboardInterrupt:
        raise Interrupted(session_id, store.location) from None
    except SettingsError as exc:
        if exc.setting is None:
            raise
        problem = exc.problem.replace(f"setting {exc.setting}", o.flag(exc.setting), 1)
        raise SettingsError(problem, "see the command's --help", setting=exc.setting) from None


def summarize(
    result: RunResult,
    store: GraphStore,
    cfg: SessionConfig,
    projected: Projection,
    started: float,
    resumed: bool = False,
    judged: Verdicts | None = None,
) -> None:
    """The summary table (with the run's judged decisions), the final answer, and the
    problems (exit 4) of a run."""
    m, s = result.spend, result.session
    nodes = store.nodes(s.id)
    faults = ", ".join(f"{k} {v}" for k, v in m.faults.items()) or "none"
    rows = {
        "status": s.status + (" (resumed)" if resumed else ""),
        "store": store.location,
        "reports": str(result.reports),
        "model": f"{m.model}; structured output: {s.structured_output}",
        **fitting_rows(s),
        "LLM calls": f"{m.calls} made, {m.cache_hits} answered from the cache, {m.failures} failed "
        f"({m.invalid_outputs} of them answered without valid structured output), "
        f"{m.refused} refused by a budget",
        "retries": f"{m.retries} ({m.repairs} replies repaired); faults seen: {faults}",
        "tokens": f"{m.tokens:,} ({m.prompt_tokens:,} prompt, of which "
        f"{m.cached_tokens:,} cached by the server; {m.completion_tokens:,} completion)",
        "cost": f"${m.cost_usd:.4f} this run; ${s.cost_usd:.4f} for the session (prices: {m.prices})",
        "degenerate output": guard_row(s, degenerate_count(nodes)),
        "tensions": ledger_row(nodes, cfg.max_open_stubs),
        "convergence": convergence_row(cfg.rounds, cfg.convergence_threshold, cfg.protocol, nodes),
        "emergence ledger": claims_row(arm_shares(store, s.id, nodes)),
        "citations": citations_row(citations(result.final)),
        "projected": projection_row(projected, m.calls, m.prompt_tokens, m.cost_usd),
        "wall time": f"{time.monotonic() - started:.1f}s",
    }
    if judged is not None:
        rows["judged decisions"] = escape(judged.text())
    if len({r.model for r in m.by_role}) > 1:  # roles on different models: each one's share
        rows["calls by role"] = role_calls_text(m.by_role)
    if m.earlier_calls:
        rows["earlier runs"] = (
            f"{m.earlier_calls} calls, {m.earlier_tokens:,} tokens, ${m.earlier_cost_usd:.4f}: counted "
            "against the budgets"
        )
    out.print(summary_table(store, s.id, rows, nodes))
    if result.final is not None:
        if result.final.answer is not None:
            out.print(f"[bold green]Answer:[/] {escape(result.final.answer)}")
        out.print(f"[bold green]Final:[/] {escape(result.final.text)}")
    if s.problems:
        for problem in s.problems:
            noted(f"dagmca: warning: {problem}")
        raise typer.Exit(DEGRADED_EXIT)


def reopened(node: NodeRecord, overrides: dict[str, Any], quiet: bool) -> Noted:
    """The events of a stored session reopened with `overrides`, to the live progress
    (none when `quiet`), with a note when the session opens if they move it to another
    backend or model: cached answers are keyed by model, so every call is asked again."""
    from dagmca.workspace import stored as by_id

    stored = by_id.stored_config(node)
    llm, model = overrides.get("llm", stored.llm), overrides.get("model", stored.model)
    note = (
        f"the session ran on {stored.llm} {stored.model or '(default model)'}; this run uses {llm} "
        f"{model or '(default model)'}. Cached answers are keyed by model: with another model every call "
        "is asked again."
        if model != stored.model or llm != stored.llm
        else None
    )
    return Noted(err, note, None if quiet else progress(err))


# what `resume` and `revisit` may change of a stored session's settings: a moved
# endpoint, a raised budget and its prices
OVERRIDES = (
    "llm",
    "model",
    "base_url",
    "local_model",
    *BUDGETS,
    "price_per_1k_prompt",
    "price_per_1k_completion",
)


@o.with_overrides(OVERRIDES)
def resume(
    overrides: dict[str, Any],
    session: o.SessionArg,
    store: o.Store = None,
    out_dir: o.OutDir = None,
    quiet: o.Quiet = False,
) -> None:
    """Finish a session that was killed, interrupted or stopped: every finished call is
    replayed from the cache, the rest is asked, with the session's own settings (an
    endpoint that moved and a raised budget can be given). Budgets count what earlier
    runs spent."""
    from dagmca.workspace import stored as by_id

    location = resolve_store(store)
    with open_existing(location) as st:
        node = require_session(st, session)
        target = by_id.reports_dir(location, session, out_dir)
        started = time.monotonic()
        display = Verdicts(reopened(node, overrides, quiet))
        try:
            result = in_session(
                st,
                session,
                lambda ws: ws.resume(session, events=display, out_dir=target, **overrides),
                by_id.stored_config(node).embedder,
            )
        except SessionDone as done:  # nothing left: not an error, as a finished build run again
            said(done.problem)
            return
        cfg = result.settings
        projected = projection(cfg, result.session.passage, result.session.question is not None)
        summarize(result, st, cfg, projected, started, resumed=True, judged=display)


@o.with_overrides(OVERRIDES)
def revisit(
    overrides: dict[str, Any],
    session: o.SessionArg,
    passage: o.NewPassage = None,
    store: o.Store = None,
    out_dir: o.OutDir = None,
    quiet: o.Quiet = False,
) -> None:
    """Later, with new context: re-check a finished session's open stubs, explore the
    relevant ones into the same DAG, and integrate again. Budgets count what earlier
    runs spent."""
    from dagmca.workspace import stored as by_id

    location = resolve_store(store)
    with open_existing(location) as st:
        node = require_session(st, session)
        stored = by_id.stored_config(node)
        new_text = read_passage(passage, stored.max_passage_bytes) if passage is not None else None
        target = by_id.reports_dir(location, session, out_dir)
        display = reopened(node, overrides, quiet)
        result = in_session(
            st,
            session,
            lambda ws: ws.revisit(session, passage=new_text, events=display, out_dir=target, **overrides),
            stored.embedder,
        )
        out.print(
            f"revisited {session}: {result.checked} open stubs checked against "
            f"{'the new passage' if new_text else 'the final answer'}; {len(result.superseded)} superseded, "
            f"{len(result.explored)} explored ({', '.join(result.explored) or 'none'}); "
            f"{result.spend.calls} LLM calls"
        )
        if result.final is not None and (result.explored or result.superseded):
            out.print(f"[bold green]Final (integrated again):[/] {result.final.text}")
