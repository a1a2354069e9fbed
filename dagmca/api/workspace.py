"""`Workspace`: dagmca as a library. One store, its writer thread and one embedder,
opened once and shared by every session run through it, on the caller's event loop.

    async with dagmca.Workspace("graph.db") as ws:
        result = await ws.run(passage=text, settings={"llm": "fake"})
        graph = await ws.graph(result.id)

Beside the sessions one at a time (`run`, `resume`, `revisit`, `ledger` and the
readers, from `BaseWorkspace`), it runs what spans many: a corpus `build`, an
evaluation (`eval`), `ask` over the stored graph, and the findings that hold across
samples of one passage (`run_samples`, `stability`). Nothing here prints or exits:
failures are `dagmca.errors` exceptions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from dagmca.api.building import BuildResult, BuildWatcher, run_build
from dagmca.ask.corpus import Sessions
from dagmca.ask.models import Answer
from dagmca.config.overrides import EvalOverrides, Overrides
from dagmca.errors import UserError
from dagmca.evaluation import EvalReport, Task, load_tasks
from dagmca.evaluation.identity import task_set as described
from dagmca.evaluation.options import EvalOptions, plan_eval
from dagmca.evaluation.suites import load_suite
from dagmca.passage import MAX_QUESTION_BYTES, check_text
from dagmca.swarm.options import SwarmOptions
from dagmca.workspace import BaseWorkspace, ClientLike, SettingsLike, settings_from
from dagmca.workspace.inputs import options_from

if TYPE_CHECKING:
    from dagmca.evaluation.judgecheck import JudgeCheckReport
    from dagmca.evaluation.report import RunRecord
    from dagmca.llm.base import Completer
    from dagmca.stability.models import AlignCost, SampleInfo, StabilityReport
    from dagmca.stability.samples import Vary
    from dagmca.swarm.loop import OnAttempt
    from dagmca.swarm.report import SwarmReport


class Workspace(BaseWorkspace):
    """A store opened for running and reading sessions, building corpora, evaluating
    and asking. `store`: a file path (the embedded SQLite store, created when missing),
    a bolt:// or neo4j:// URI, or an open `GraphStore` (for instance `Neo4jStore(driver)`
    around your own neo4j driver), which the workspace then does not close. `embedder`:
    your own (the bundled MiniLM when None). `reports`: the folder that gets a folder
    per session's report files (default: sessions/ beside the store)."""

    async def build(
        self,
        sources: Sequence[str | Path],
        *,
        settings: SettingsLike = None,
        client: ClientLike | None = None,
        parallel: int | None = None,
        cross_revisits: int = 3,
        watch: BuildWatcher | None = None,
        **overrides: Unpack[Overrides],
    ) -> BuildResult:
        """Debate many passages into the store, as `dagmca build` does: a session per
        passage (text files, folders of *.txt and *.md, JSONL files of {id, text}),
        `parallel` at once under one rate limit, each new passage checked against the
        earlier sessions' open stubs (at most `cross_revisits` revisit branches started
        in them). Run it again to resume: finished passages are skipped, unfinished ones
        resumed. `watch`: a live view, started with the running build and stopped when
        it ends."""
        cfg = settings_from(settings, overrides)
        paths = [Path(s) for s in sources]
        return await run_build(self, cfg, paths, client, parallel, cross_revisits, watch)

    async def eval(
        self,
        tasks: str | Path | Sequence[Task] | None = None,
        *,
        suite: str | None = None,
        options: EvalOptions | Mapping[str, Any] | None = None,
        settings: SettingsLike = None,
        client: ClientLike | None = None,
        judge: Completer | None = None,
        on_done: Callable[[RunRecord], None] | None = None,
        **overrides: Unpack[EvalOverrides],
    ) -> EvalReport:
        """Run (or finish) an evaluation, as `dagmca eval` does: every arm over every task
        `repeats` times as a question session, scored against the tasks' answers or
        judged in pairs, with intervals, paired tests and cost, and the Evaluation in the
        graph. `tasks`: a JSONL file or folder of .txt passages, or `Task`s (or `suite`:
        a generated suite, `"dates"` or `"dates:80"`, as `--suite`). `options`: an
        `EvalOptions` (or a mapping of its fields: `{"arms": "mca:rounds=1,vote,single",
        "repeats": 3}`), what `dagmca eval`'s own options set. The same `eval_id`
        (default: from the tasks, arms, repeats and every setting that can change an
        answer) resumes: nothing finished is run or judged again; under other settings
        it is refused. `client`: the debaters' client; `judge`: the judge's (default:
        the settings' judge role); `on_done`: told of each session as it ends."""
        from dagmca.evaluation.running import run_eval

        cfg = settings_from(settings, overrides)
        chosen = options_from(EvalOptions, options)
        if (suite is None) == (tasks is None):
            raise UserError("give tasks or a suite, one of them", "e.g. suite='dates'")
        path = Path(tasks) if isinstance(tasks, str | Path) else None
        if suite is not None:
            found, task_set = load_suite(suite)
        else:
            given = [] if tasks is None or isinstance(tasks, str | Path) else list(tasks)
            found = load_tasks(path) if path is not None else given
            task_set = described(found, path=path)
        if not found:
            raise UserError("no task to evaluate", "give a JSONL file of tasks or a folder of .txt passages")
        plan = plan_eval(chosen, found, task_set, path if path is not None else found, cfg)
        return await run_eval(self, plan, cfg, client=client, judge=judge, on_done=on_done)

    async def judge_check(
        self,
        tasks: str | Path | Sequence[Task] | None = None,
        *,
        other_model: str | None = None,
        settings: SettingsLike = None,
        client: ClientLike | None = None,
        other_client: ClientLike | None = None,
        **overrides: Unpack[EvalOverrides],
    ) -> JudgeCheckReport:
        """Check the judge an eval with these settings would use, as `dagmca judge-check`
        does: pairs whose right verdict is known (an answer and its padded restatement,
        a right answer and a near miss against the reference, and with `other_model` the
        judge's own model's answer and another's), read by the judge with the eval's own
        pair prompt in both orders; each measure with its interval and status, stored as
        a JudgeCheck node that every eval of that judge reports. `tasks`: a JSONL file or
        `Task`s (None: the built-in set). `client`: the writer's and the judge's client;
        `other_client`: the other model's (default: the settings' backend with
        `other_model`). Run it again to read it back: its calls come from the cache."""
        from dagmca.evaluation.judgecheck.running import plan_check, run_judge_check

        cfg = settings_from(settings, overrides)
        found = load_tasks(Path(tasks)) if isinstance(tasks, str | Path) else tasks
        plan = plan_check(found, other_model)
        if not plan.tasks:
            raise UserError(
                "no task to check the judge on", "give a JSONL file of tasks, or none for the built-in set"
            )
        return await run_judge_check(self, plan, cfg, client=client, other_client=other_client)

    async def swarm(
        self,
        tasks: str | Path,
        *,
        options: SwarmOptions | Mapping[str, Any] | None = None,
        settings: SettingsLike = None,
        client: ClientLike | None = None,
        on_attempt: OnAttempt | None = None,
        on_start: Callable[[int], None] | None = None,
        **overrides: Unpack[Overrides],
    ) -> SwarmReport:
        """Run (or finish, or read back) the swarm of the stream `tasks` (a JSONL file),
        as `dagmca swarm` does, and compare its routers. `options`: a `SwarmOptions` (or
        a mapping of its fields: `{"router": "affinity,random", "repeats": 3}`), what
        `dagmca swarm`'s own options set; the affinity router's temperature is the
        setting `router_temperature`. Bad input raises a UserError before any call;
        code tasks where no namespace can be made raise ExecutorUnavailable unless
        `unsafe_executor`. `on_start` is told how many attempts are left to make,
        `on_attempt` of each as it ends."""
        from dagmca.swarm.running import plan_swarm, swarm_in

        cfg = settings_from(settings, overrides)
        plan = plan_swarm(Path(tasks), options_from(SwarmOptions, options), cfg)
        return await swarm_in(self, plan, cfg, client, on_attempt, on_start)

    async def ask(
        self,
        question: str,
        *,
        sessions: Sessions = None,
        settings: SettingsLike = None,
        client: ClientLike | None = None,
        retrieve_only: bool = False,
        **overrides: Unpack[Overrides],
    ) -> Answer:
        """Ask the stored graph: an answer citing the nodes it rests on, every citation
        checked, with the dissent beside it. `sessions`: `"all"` reads every session of
        the store; a list of ids reads those; `"latest"` or None (the default) reads the
        most recent session only, as `dagmca ask` without `--session`/`--all` does (the
        answer's `scope` says which). The answer is the `final` role's model's, on the
        workspace's backend for those settings (started once, shared with its sessions
        and every later ask) or on `client`; `retrieve_only` asks no model."""
        from dagmca.ask import retrieve
        from dagmca.ask.client import answer_with_client

        cfg = settings_from(settings, overrides)
        asked = check_text(question, MAX_QUESTION_BYTES, "question")
        found = await retrieve(self.store, asked, embedder=self.embedder, sessions=sessions)
        if retrieve_only or not found.hits:
            return found.as_answer()
        backend = await self.backend(cfg, client)
        return await answer_with_client(cfg, self.store, found, backend.client)

    async def stability(
        self,
        sessions: Sequence[str],
        *,
        study: str | None = None,
        candidates: int = 3,
        prefilter: float | None = None,
        dry_run: bool = False,
        settings: SettingsLike = None,
        client: ClientLike | None = None,
        on_estimate: Callable[[AlignCost], None] | None = None,
        **overrides: Unpack[Overrides],
    ) -> StabilityReport:
        """Which findings hold across `sessions` (two or more of one passage and
        question), as `dagmca stability` does: their tensions, final claims and answers
        aligned by judgment into findings with how many of the sessions reach each (and
        its interval), written to the graph as Finding nodes. `settings` (default: the
        first session's own) and `overrides` choose the judge; `candidates`: how many of
        another session's members each member is judged against, the most similar from
        `prefilter` (default: the duplicate prefilter); `on_estimate` is told the cost
        before the first call; `dry_run` stops there. The same sessions again are the
        same study: nothing is asked twice."""
        from dagmca.stability import AlignPlan, align
        from dagmca.store import require_session
        from dagmca.workspace.stored import stored_config

        if settings is None:
            if not sessions:
                raise UserError("stability needs two or more sessions of one passage", "name them")
            first = await self.store.aread(lambda s: require_session(s, sessions[0]))
            settings = stored_config(first)
        cfg = settings_from(settings, overrides)
        plan = AlignPlan(
            list(sessions), study=study, per_member=candidates, prefilter=prefilter, dry_run=dry_run
        )
        return await align(self, plan, cfg, client=client, on_estimate=on_estimate)

    async def run_samples(
        self,
        passage: str | None,
        *,
        samples: int,
        vary: Vary = "seed",
        models: Sequence[str] = (),
        temperatures: Sequence[float] = (),
        question: str | None = None,
        study: str | None = None,
        parallel: int | None = None,
        candidates: int = 3,
        prefilter: float | None = None,
        settings: SettingsLike = None,
        client: ClientLike | None = None,
        on_done: Callable[[SampleInfo], None] | None = None,
        on_estimate: Callable[[AlignCost], None] | None = None,
        **overrides: Unpack[Overrides],
    ) -> StabilityReport:
        """Debate `passage` (and `question`) `samples` times, as `dagmca run --samples`
        does, each with its own seed and, by `vary`, its own temperature (`temperatures`
        in turn, default spread over 0.2-1.0) or model (`models` in turn); then align
        the sessions as `stability` does. The sessions run `parallel` at a time under
        one concurrency limit, spend and rate limit. The same call again resumes: ended
        sessions are kept, cut ones finished, nothing finished asked again. `on_done`
        is told of each sample as it ends (or is found ended)."""
        from dagmca.stability import SamplePlan, run_study

        cfg = settings_from(settings, overrides)
        if passage is None and question is None:
            raise UserError("nothing to debate", "give a passage, a question, or both")
        text = check_text(passage, cfg.max_passage_bytes) if passage is not None else ""
        asked = check_text(question, MAX_QUESTION_BYTES, "question") if question is not None else None
        plan = SamplePlan(
            samples=samples, vary=vary, models=list(models), temperatures=list(temperatures), study=study,
            parallel=parallel, per_member=candidates, prefilter=prefilter,
        )  # fmt: skip
        return await run_study(
            self, text, asked, cfg, plan, client=client, on_done=on_done, on_estimate=on_estimate
        )
