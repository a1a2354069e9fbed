"""Branches started as soon as their inputs exist, committed in a fixed order
.

Every debate below a finished one runs as a task from the moment it is made; its
parent's siblings may still be running. What a finished debate changes in the shared
state (credit, stub statuses, duplicate and stub checks, the selection of its own
branches) is committed one debate at a time, in the order the debates were made,
never the order they finished: a debate done early waits for the ones made before it
to be committed, its sub-branches do not. Branches at --max-depth, which cannot
branch, are committed in batches (every such branch made in a row), their checks
judged together. Made in commit order, from committed state, the debates keep the
same order, the same ids and the same prompts whatever the latencies.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from dagmca.debate.dag import merging
from dagmca.debate.dag.board import BranchBoard
from dagmca.debate.outcomes import DebateOutcome
from dagmca.debate.state import SessionState
from dagmca.graph import DebateNode, DebateStatus, TensionNode
from dagmca.llm.gate import ranked

# the branches selected from one debate (or one revisit), on the board they share
Plan = tuple[BranchBoard, list[tuple[DebateNode, TensionNode]]]
Run = Callable[[DebateNode, BranchBoard, dict[str, list[str]]], Coroutine[Any, Any, DebateOutcome]]
# commits a batch of finished branches (one, or a run of last-level ones), in order
Commit = Callable[[list[tuple[DebateNode, TensionNode]]], Awaitable[list[Plan]]]


@dataclass
class _Started:
    branch: DebateNode
    tension: TensionNode
    board: BranchBoard
    task: asyncio.Task[DebateOutcome]


class Chain:
    """The debates of one exploration, in the order they were made."""

    def __init__(self, state: SessionState, run: Run, commit: Commit) -> None:
        self.state = state
        self._run = run
        self._commit = commit
        self._started: list[_Started] = []
        # (depth, judged): a family's merge calls, asked once its branches are finished
        self._merges: list[tuple[int, asyncio.Task[list[merging.Judged]]]] = []
        # the first failure of any debate or merge: the chain stops at once, not when
        # its turn to be committed comes
        self._failure: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def _watch(self, task: asyncio.Task[Any]) -> None:
        if task.cancelled() or self._failure.done():
            return
        if (error := task.exception()) is not None:
            self._failure.set_exception(error)

    async def _finished(self, task: asyncio.Task[Any]) -> Any:
        """`task`'s result once it is done, or the first failure of another task before."""
        await asyncio.wait({task, self._failure}, return_when=asyncio.FIRST_COMPLETED)
        if not task.done():
            self._failure.result()  # raises it
        return task.result()

    def start(self, plan: Plan) -> None:
        """Run a plan's branches now, each with the agents' contexts as they are (credits
        committed later must not reach a debate already running)."""
        board, pairs = plan
        kept = self.state.contexts.snapshot()
        family: list[_Started] = []
        for branch, tension in pairs:
            task = asyncio.create_task(self._run(branch, board, kept))
            task.add_done_callback(self._watch)
            family.append(_Started(branch, tension, board, task))
        self._started += family
        if family:
            depth = family[0].branch.depth
            with ranked(depth):  # its calls wait as its branches' did
                merge = asyncio.create_task(self._merge_when_finished(family))
            merge.add_done_callback(self._watch)
            self._merges.append((depth, merge))

    async def _merge_when_finished(self, family: list[_Started]) -> list[merging.Judged]:
        """A family's merge, asked as soon as its branches are finished: it reads their
        resolutions and nothing a commit changes, so it need not wait for theirs."""
        await asyncio.wait([s.task for s in family])
        if any(s.task.cancelled() or s.task.exception() is not None for s in family):
            return []  # the chain stops on that failure
        finished = [s.branch for s in family if s.branch.status is DebateStatus.DONE]
        return await merging.judged(self.state, [(finished, family[0].board.parent)])

    async def commit_all(self) -> list[merging.Judged]:
        """Commit every debate in order (those its commits start too), then wait for the
        merges. Returns what the merges decided, deepest families first, then in the
        order they were made: the order `merging.apply` writes them in."""
        try:
            i = 0
            while i < len(self._started):
                batch = self._batch(i)
                i += len(batch)
                for done in batch:
                    await self._finished(done.task)
                for plan in await self._commit([(s.branch, s.tension) for s in batch]):
                    self.start(plan)
            ordered = sorted(self._merges, key=lambda m: -m[0])  # stable: made order kept
            return [j for _, task in ordered for j in await self._finished(task)]
        except BaseException:
            await self._cancel()
            raise

    def _batch(self, i: int) -> list[_Started]:
        """The debates committed next: the one at `i`; or, if it is at the last level
        (it cannot branch), it and every last-level debate made right after it. Those
        start nothing but revisits (which then wait for the batch's last debate), and
        their checks, judged together, are one round trip instead of one each in turn.
        Which debates a batch holds depends on the order they were made, not on
        latency."""
        last = self.state.handles.config.max_depth
        j = i + 1
        if self._started[i].branch.depth >= last:
            while j < len(self._started) and self._started[j].branch.depth >= last:
                j += 1
        return self._started[i:j]

    async def _cancel(self) -> None:
        """A failure stops every debate and merge still running before it goes on; their
        outcomes are retrieved, so a call that failed the same way is not reported twice."""
        tasks: list[asyncio.Task[Any]] = [s.task for s in self._started] + [t for _, t in self._merges]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._failure.done():
            self._failure.exception()  # retrieved: it is the one going on
