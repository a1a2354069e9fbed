"""`dagmca stability SESSION SESSION …`: which findings hold across sessions already run
of one passage (and question). The first session's settings choose the judge, with what
the options change; sessions of different passages are refused in one line. The same
sessions again are the same study: nothing asked before is asked again."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from dagmca.cli import options as o
from dagmca.cli.findings import show_report, tell_estimate
from dagmca.cli.run import OVERRIDES
from dagmca.errors import BuildInterrupted
from dagmca.store import open_existing, require_session, resolve_store

# what may change of the first session's settings: those `resume` may, the judge's
# candidates' cosine and how many calls are in flight
STUDY_SETTINGS = ("duplicate_prefilter", "concurrency", "rpm", "tpm")

SessionsArg = Annotated[list[str], typer.Argument(help="Two or more sessions of one passage.")]
DryRun = Annotated[
    bool, typer.Option("--dry-run", help="Print the alignment's projected calls and cost; spend nothing.")
]


@o.with_overrides((*OVERRIDES, *STUDY_SETTINGS))
def stability(
    overrides: dict[str, Any],
    sessions: SessionsArg,
    study: o.StudyId = None,
    candidates: o.Candidates = 3,
    store: o.Store = None,
    as_json: o.AsJSON = False,
    dry_run: DryRun = False,
) -> None:
    """Which findings hold across sessions of one passage. Their tensions are aligned as
    duplicate questions are judged (an embedding prefilter, then the judge in both
    orders; a verdict that changes with the order is undecided, not a match), their
    final answers' claims the same way (as stating the same thing) and, in question
    sessions, their answers by the evaluation's scorer. Each group, every two of its
    members judged a match, is a Finding in the graph with how many of the sessions
    reach it and the interval of that rate; the report lists them by recurrence, the
    core (in at least half the sessions) first."""
    from dagmca.api.sync import in_workspace
    from dagmca.llm.factory import check_backend
    from dagmca.workspace.stored import stored_config

    o.check_session_id(study)
    with open_existing(resolve_store(store)) as st:
        first = require_session(st, sessions[0])
        cfg = o.build_config({**stored_config(first).model_dump(), **overrides})
        if not dry_run:
            check_backend(cfg)
        try:
            report = in_workspace(
                st,
                lambda ws: ws.stability(
                    sessions,
                    study=study,
                    candidates=candidates,
                    dry_run=dry_run,
                    settings=cfg,
                    on_estimate=None if as_json else tell_estimate,
                ),
                embedder=cfg.embedder,
            )
        except KeyboardInterrupt:
            raise BuildInterrupted(
                "stability interrupted: every finished judgment is kept",
                "run the same command again to finish it without asking a finished judgment again",
            ) from None
    if dry_run:
        if as_json:
            print(report.estimate.model_dump_json(indent=2))
        return
    show_report(report, as_json)
