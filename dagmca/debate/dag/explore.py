"""Running debates and branching from them: each debate is
monitored as it runs; its tensions are selected into branches that run in parallel
and know of each other; as each branch is committed the open stubs are checked
against it and the relevant ones explored; finished siblings are merged."""

from __future__ import annotations

import asyncio

from dagmca import tracing
from dagmca.debate.dag import duplicates, merging, sections, stubs
from dagmca.debate.dag.board import BranchBoard
from dagmca.debate.dag.chain import Chain, Plan
from dagmca.debate.dag.monitor import Monitor
from dagmca.debate.dag.selector import select
from dagmca.debate.engines import ENGINES
from dagmca.debate.events import (
    BranchesSelected,
    BranchRouted,
    BranchStarted,
    Credited,
    DebateDone,
    StubRevisited,
)
from dagmca.debate.outcomes import DebateOutcome
from dagmca.debate.state import SessionState
from dagmca.graph import (
    DebateNode,
    DebateOrigin,
    DebateStatus,
    EdgeType,
    GraphNode,
    Role,
    SynthesisNode,
    TensionNode,
    TensionStatus,
    TurnNode,
)
from dagmca.llm.gate import ranked
from dagmca.metrics.session import CONTENT
from dagmca.similarity import pieces
from dagmca.similarity.counts import EmbedPhase

# a branch's turn, the branches it cites and their outputs it could see when it was made
Referable = tuple[TurnNode, list[str], dict[str, str]]


class Explorer:
    """The DAG of one session below a debate: its debates, branches and revisits."""

    def __init__(self, state: SessionState) -> None:
        self.state = state
        # revisit branches made relevant by a stub check outside a chain (of the final
        # syntheses, of a revisit's new text), run by the next one
        self._revisits: list[Plan] = []

    # -- one debate ----------------------------------------------------------------
    async def run_debate(
        self,
        debate: DebateNode,
        board: BranchBoard | None = None,
        kept: dict[str, list[str]] | None = None,
    ) -> DebateOutcome:
        """Run `debate` to its end; `kept`: the agents' contexts it sees (by default, as
        they are when its engine starts). Its calls wait for a slot ranked by its depth
        (llm/gate.py): a shallower debate has more of the DAG waiting for it. Traced, the
        run is a span; a branch's links to the debate it branches from."""
        parent = board.parent.id if board is not None else None
        traced = tracing.debate(debate.id, origin=debate.origin.value, depth=debate.depth, parent=parent)
        with ranked(debate.depth), traced:
            return await self._run_debate(debate, board, kept)

    async def _run_debate(
        self, debate: DebateNode, board: BranchBoard | None, kept: dict[str, list[str]] | None
    ) -> DebateOutcome:
        st = self.state
        background = (lambda: board.background(debate.id)) if board else None
        await sections.block_for(st, debate)
        frame = st.prompts.frame(debate, background)
        monitor = Monitor(st, debate, frame)

        references: list[Referable] = []

        async def on_turn(turn: TurnNode) -> None:
            await monitor.on_turn(turn)
            if board is not None:
                # what the turn could reference is taken now; it is compared once the
                # debate is over, when its texts have long been embedded ahead
                cited, visible = board.cited(turn.debate, turn.text), board.visible_outputs(turn.debate)
                references.append((turn, cited, visible))

        def on_round(number: int, output: str) -> None:
            monitor.on_round_end()
            if board is not None:
                board.update(debate.id, number, output)

        async def before_round(number: int) -> None:
            if board is not None:
                await board.before_round(debate.id, number)

        async def flags() -> list[str]:
            # the strange loop reads the debate's flags once its observers are done with
            # its rounds: waiting for them keeps its prompt the same on a replay
            await monitor.drain()
            flagged = st.graph.tensions_of.get(debate.id, {}).values()
            return [t.question for t in flagged if t.status is not TensionStatus.DUPLICATE]

        debate.protocol = st.handles.config.protocol
        engine = ENGINES[st.handles.config.protocol](
            st,
            debate,
            frame,
            on_turn=on_turn,
            on_round=on_round,
            before_round=before_round,
            on_phase=monitor.on_phase,
            kept=kept,
            flags=flags,
        )
        try:
            outcome: DebateOutcome = await engine.run()
        finally:
            if board is not None:
                board.stop(debate.id)  # siblings waiting for this branch's next round go on
        # what its commit compares next, ahead of the queue while its observers finish:
        # the resolution (a long one piece by piece, against the open stubs) and the
        # contributions it credits
        if outcome.resolution:
            said = _contributions(outcome).values()
            st.handles.embedder.prefetch([outcome.resolution, *pieces(outcome.resolution), *said], soon=True)
        await monitor.drain()
        if references:  # edges nothing decides on: the debate does not wait for them
            st.beside.append(asyncio.create_task(self._references(references)))
        debate.resolution = outcome.resolution
        debate.resolution_parts = outcome.parts.to_json() if outcome.parts is not None else None
        source = outcome.source or outcome.resolution
        debate.degenerate = any(t.degenerate and t.text == source for t in outcome.turns)
        debate.rounds = outcome.rounds
        debate.converged = outcome.converged
        debate.status = DebateStatus.DONE if outcome.resolution else DebateStatus.FAILED
        st.graph.waiting.discard(debate.id)
        st.write([debate])
        st.graph.outcomes[debate.id] = outcome
        st.handles.emit(DebateDone(debate=debate.id, origin=debate.origin.value))
        return outcome

    async def _references(self, turns: list[Referable]) -> None:
        """A finished branch's REFERENCES, turn by turn, in the order they were made."""
        for turn, cited, visible in turns:
            await self._references_of(turn, cited, visible)

    async def _references_of(self, turn: TurnNode, cited: list[str], visible: dict[str, str]) -> None:
        """A branch REFERENCES another when one of its turns cites it by tag ([B2]) or
        closely echoes the other's output visible when the turn was made. Debate to
        debate, so two branches that cite each other form a cycle of reference (allowed:
        relations are not structure)."""
        st = self.state
        edges = [
            st.handles.edge(
                turn.debate, other, EdgeType.REFERENCES, key=turn.id, via="citation", turn=turn.id
            )
            for other in cited
        ]
        sims: list[float] = []
        if visible:  # one product; nothing to encode when no sibling has shown an output yet
            found = await st.handles.embedder.asimilarities(
                turn.text, list(visible.values()), phase=EmbedPhase.VISIBILITY
            )
            sims = [float(x) for x in found]
        for other, sim in zip(visible, sims, strict=True):
            if other not in cited and sim >= st.handles.config.reference_threshold:
                edges.append(
                    st.handles.edge(turn.debate, other, EdgeType.REFERENCES, key=turn.id, via="similarity",
                            turn=turn.id, similarity=round(sim, 4))
                )  # fmt: skip
        if edges:
            # the turn names what it referenced, so `check` can find every edge it made
            turn.references = [e.target for e in edges]
            st.write([turn], edges)

    # -- selection and branches -------------------------------------------------------
    async def explore(self, debate: DebateNode) -> None:
        """Branch from a finished debate, then from its branches, down to --max-depth,
        with every revisit the stub checks on the way make relevant."""
        await duplicates.merge(self.state, [debate])
        await self._explore_and_check([debate])
        await self._run_revisits()  # made relevant by the last merges' syntheses

    async def _run_revisits(self) -> None:
        while self._revisits:
            await self._explore_and_check([])

    async def _explore_and_check(self, parents: list[DebateNode]) -> None:
        """The DAG below `parents`, then one stub check of every synthesis its merges
        wrote (deepest first): one round of judge calls at the end, not one per family."""
        syntheses = await self._explore(parents)
        await self._check_stubs([(s, s.resolution) for s in syntheses])

    async def _explore(self, parents: list[DebateNode]) -> list[SynthesisNode]:
        """The DAG below `parents`, each branch started as soon as its inputs exist
        (chain.py): the branches of `parents` and the revisits planned since the last
        exploration at once, a sub-branch when its parent is committed, a revisit when
        the check that made it relevant is. Merges are asked as soon as a family's
        branches are finished, beside the debates still running, and written at the
        end, deepest first. Returns the syntheses written, in that order, for the
        caller's stub check."""
        st = self.state
        plans, self._revisits = self._revisits, []
        plans += [plan for parent in parents if (plan := await self._plan(parent)) is not None]
        chain = Chain(st, self.run_debate, self._commit)
        for plan in plans:
            chain.start(plan)
        return merging.apply(st, await chain.commit_all())

    async def _commit(self, batch: list[tuple[DebateNode, TensionNode]]) -> list[Plan]:
        """What finished branches change, in the chain's order (one branch, or a batch of
        last-level ones): their credit; their open stubs judged against the open stubs
        before them (duplicates) and the open stubs against their resolutions (stub
        checks), in one round trip; then the revisits those checks made relevant and
        their own branches, returned to be started. Their flags become open stubs to
        others from here on."""
        with ranked(batch[0][0].depth):  # its checks rank as its turns did
            return await self._commit_ranked(batch)

    async def _commit_ranked(self, batch: list[tuple[DebateNode, TensionNode]]) -> list[Plan]:
        st = self.state
        st.graph.uncommitted.difference_update(branch.id for branch, _ in batch)
        for branch, tension in batch:
            await self.credit(branch, tension.category.value)
            tension.status = TensionStatus.EXPLORED
            st.write([tension])
        plans = self._plan_revisits(await self._after_branches([branch for branch, _ in batch]))
        for branch, _ in batch:
            if (plan := await self._plan(branch)) is not None:
                plans.append(plan)
        return plans

    async def _plan(self, debate: DebateNode) -> Plan | None:
        """The branches of `debate`: its stubs selected, each a new debate on a board."""
        st, cfg = self.state, self.state.handles.config
        candidates = [
            t for t in st.graph.tensions.values() if t.debate == debate.id and t.status is TensionStatus.STUB
        ]
        if debate.depth >= cfg.max_depth or not candidates or not st.can_branch():
            return None
        similarity = (
            await st.handles.embedder.amatrix([t.question for t in candidates], phase=EmbedPhase.SELECTION)
            if cfg.strategy == "diverse"
            else None
        )
        room = st.graph.room_for_debates(st.handles.config.max_nodes)
        limit = cfg.max_branches if room is None else min(cfg.max_branches, room)
        chosen = select(cfg.strategy, candidates, limit, similarity)
        pairs: list[tuple[DebateNode, TensionNode]] = []
        for i, tension in enumerate(chosen, start=1):
            pairs.append(
                (self._new_branch(f"{debate.id}/b{i}", debate, tension, DebateOrigin.BRANCH), tension)
            )
        board = BranchBoard.start(debate, st.graph.open_stubs())
        for branch, _ in pairs:
            board.add(branch)
        st.handles.emit(
            BranchesSelected(
                debate=debate.id,
                count=len(pairs),
                candidates=len(candidates),
                selected=tuple((t.question, t.urgency) for _, t in pairs),
                stubbed=tuple((t.question, t.urgency) for t in candidates if t.status is TensionStatus.STUB),
            )
        )
        for branch, _ in pairs:
            st.handles.emit(BranchStarted(debate=branch.id, question=branch.question))
        return board, pairs

    def _new_branch(
        self, branch_id: str, parent: DebateNode, tension: TensionNode, origin: DebateOrigin
    ) -> DebateNode:
        st, cfg = self.state, self.state.handles.config
        tension.status = TensionStatus.SELECTED
        branch = DebateNode(
            id=branch_id,
            session=st.handles.session_id,
            origin=origin,
            question=tension.question,
            depth=parent.depth + 1,
        )
        if cfg.router != "fixed":  # branches are created in order, so routing is deterministic
            branch.staff = st.router.choose(tension.category.value, cfg.leaf_count(), branch_id)
            st.handles.emit(
                BranchRouted(debate=branch_id, category=tension.category.value, staff=tuple(branch.staff))
            )
        st.graph.waiting.add(branch.id)
        st.graph.uncommitted.add(branch.id)
        st.write(
            [tension, branch],
            [
                st.handles.edge(branch.id, parent.id, EdgeType.BRANCHES_FROM),
                st.handles.edge(branch.id, tension.id, EdgeType.EXPLORES),
                st.handles.edge(branch.id, st.handles.session_id, EdgeType.IN_SESSION),
            ],
        )
        return branch

    async def credit(self, debate: DebateNode, category: str | None = None) -> dict[str, bool]:
        """After a debate, in a fixed order (never completion order, or later prompts would
        depend on latency): which specialists' contributions survived into its resolution.
        Survivors keep them in their context; a branch updates the router's record."""
        st, cfg = self.state, self.state.handles.config
        outcome = st.graph.outcomes.get(debate.id)
        if outcome is None:
            return {}
        said = _contributions(outcome)
        survived = await st.contexts.credit(
            said, debate.resolution, st.handles.embedder, cfg.success_threshold
        )
        if category is not None:  # every router keeps the record (the personas carry it on)
            for agent in dict.fromkeys(debate.staff or said):
                st.router.update(category, agent, survived.get(agent, False))
        st.handles.emit(
            Credited(debate=debate.id, survived=tuple(sorted(a for a, ok in survived.items() if ok)))
        )
        return survived

    # -- stubs ---------------------------------------------------------------------
    async def revisit(self, node: GraphNode, text: str, *, once: bool = False) -> None:
        """After a new node, check every open stub (with `once`, those not checked
        against it yet); explore the ones it made relevant."""
        await self._check_stubs([(node, text)], once=once)
        await self._run_revisits()

    async def _after_branches(self, debates: list[DebateNode]) -> list[TensionNode]:
        """Committed branches' duplicate checks and their stub checks (the open stubs
        against their resolutions), judged together: one round trip on the way to their
        sub-branches, not two. The duplicates are applied first, so the verdicts on a
        stub merged are dropped. Returns the stubs made relevant."""
        st = self.state
        news: list[tuple[GraphNode, str]] = [(b, b.resolution) for b in debates if b.resolution]
        async with st.revisit_lock:
            dups, checks = await asyncio.gather(duplicates.judged(st, debates), stubs.judged(st, news))
            duplicates.apply(st, dups)
            return stubs.apply(st, checks, self._can_revisit)

    async def _check_stubs(self, news: list[tuple[GraphNode, str]], *, once: bool = False) -> None:
        """Check the open stubs against new nodes (the syntheses of an exploration, a
        revisit's new text: their judge calls together); a stub they made relevant
        becomes a revisit branch, run by the next exploration."""
        if news:
            relevant = await stubs.check(self.state, news, self._can_revisit, once=once)
            self._revisits += self._plan_revisits(relevant)

    def _plan_revisits(self, relevant: list[TensionNode]) -> list[Plan]:
        """A revisit branch for each stub made relevant, on a board of its own."""
        st = self.state
        plans: list[Plan] = []
        for stub in relevant:
            parent = st.graph.debates[stub.debate]
            branch = self._new_branch(f"{stub.id}/revisit", parent, stub, DebateOrigin.REVISIT)
            board = BranchBoard.start(parent, st.graph.open_stubs())
            board.add(branch)
            st.handles.emit(StubRevisited(stub=stub.id))
            st.handles.emit(BranchStarted(debate=branch.id, question=branch.question))
            plans.append((board, [(branch, stub)]))
        return plans

    def _can_revisit(self, stub: TensionNode) -> bool:
        st, cfg = self.state, self.state.handles.config
        parent = st.graph.debates.get(stub.debate)
        return (
            st.counts.revisits_used < cfg.max_revisits
            and parent is not None
            and parent.depth < cfg.max_depth
            and st.can_branch()
        )


def _contributions(outcome: DebateOutcome) -> dict[str, str]:
    """Each specialist's last contribution to a debate, by perspective."""
    return {t.perspective: t.text for t in outcome.turns if t.role is Role.SPECIALIST and t.phase in CONTENT}
