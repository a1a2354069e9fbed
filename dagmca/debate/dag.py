"""The DAG around the debates: monitoring, selection, parallel cross-aware branches,
merging, relations and stub revisiting (DESIGN §1)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from dagmca.debate.board import BranchBoard
from dagmca.debate.engine import DebateOutcome
from dagmca.debate.monitor import Monitor
from dagmca.debate.protocols import ENGINES
from dagmca.debate.selector import select
from dagmca.debate.state import SessionState
from dagmca.llm.base import CallMeta
from dagmca.metrics.session import CONTENT
from dagmca.models import (
    DebateNode,
    DebateOrigin,
    EdgeType,
    GraphNode,
    Phase,
    RevisitCheck,
    Role,
    SynthesisNode,
    TensionNode,
    TensionStatus,
    TurnNode,
)
from dagmca.prompts import templates as tpl
from dagmca.prompts.schemas import RelationVerdict
from dagmca.prompts.text import tidy


def components(n: int, pairs: list[tuple[int, int]]) -> list[list[int]]:
    """Connected components (size >= 2) of the graph on range(n) with edges `pairs`."""
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in pairs:
        parent[find(a)] = find(b)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    return sorted((g for g in groups.values() if len(g) > 1), key=lambda g: g[0])


class DagRunner:
    def __init__(self, state: SessionState) -> None:
        self.state = state
        self.outcomes: dict[str, DebateOutcome] = {}
        self.contradictions: list[tuple[DebateNode, DebateNode, str]] = []
        self._baseline: float | None = None

    def frame(self, question: str, background: Callable[[], str] | None = None) -> Callable[[], tpl.Frame]:
        cfg = self.state.config

        def build() -> tpl.Frame:
            return tpl.Frame(
                question=question,
                passage=self.state.passage,
                passage_chars=cfg.passage_prompt_chars,
                max_prompt_chars=cfg.max_prompt_chars,
                background=background() if background else "",
            )

        return build

    # -- one debate ----------------------------------------------------------------
    async def run_debate(self, debate: DebateNode, board: BranchBoard | None = None) -> DebateOutcome:
        st = self.state
        background = (lambda: board.background(debate.id)) if board else None
        frame = self.frame(debate.question, background)
        monitor = Monitor(st, debate, frame)

        async def on_turn(turn: TurnNode) -> None:
            await monitor.on_turn(turn)
            if board is not None:
                self._references(turn, board)

        def on_round(number: int, output: str) -> None:
            monitor.on_round_end()
            if board is not None:
                board.update(debate.id, number, output)

        async def before_round(number: int) -> None:
            if board is not None:
                await board.before_round(debate.id, number)

        debate.protocol = st.config.protocol
        engine = ENGINES[st.config.protocol](
            st, debate, frame, on_turn=on_turn, on_round=on_round, before_round=before_round
        )
        try:
            outcome = await engine.run()
        finally:
            if board is not None:
                board.stop(debate.id)  # siblings waiting for this branch's next round go on
        await monitor.drain()
        debate.resolution = outcome.resolution
        debate.rounds = outcome.rounds
        debate.converged = outcome.converged
        debate.status = "done" if outcome.resolution else "failed"
        st.write([debate])
        self.outcomes[debate.id] = outcome
        st.events.emit("debate_done", debate=debate.id, origin=debate.origin.value)
        return outcome

    def _references(self, turn: TurnNode, board: BranchBoard) -> None:
        """A branch REFERENCES another when one of its turns cites it by tag ([B2]) or
        closely echoes the other's visible output. Debate to debate, so two branches
        that cite each other form a cycle of reference (allowed: relations are not
        structure)."""
        st = self.state
        edges = [
            st.edge(turn.debate, other, EdgeType.REFERENCES, via="citation", turn=turn.id)
            for other in board.cited(turn.debate, turn.text)
        ]
        cited = {e.target for e in edges}
        for other, text in board.visible_outputs(turn.debate).items():
            sim = st.embedder.similarity(turn.text, text)
            if other not in cited and sim >= st.config.reference_threshold:
                edges.append(
                    st.edge(turn.debate, other, EdgeType.REFERENCES, via="similarity", turn=turn.id,
                            similarity=round(sim, 4))
                )  # fmt: skip
        if edges:
            st.write([], edges)

    # -- selection and branches -------------------------------------------------------
    def _can_branch(self) -> bool:
        st = self.state
        if st.room_for_debates() == 0:
            st.events.emit("node_cap", nodes=len(st.node_ids))
            return False
        # Keep one debate round and the final integration in reserve.
        return not st.llm.exhausted(reserve_calls=st.config.per_round_calls() + 1)

    async def explore(self, debate: DebateNode) -> None:
        st, cfg = self.state, self.state.config
        candidates = [
            t for t in st.tensions.values() if t.debate == debate.id and t.status is TensionStatus.STUB
        ]
        if debate.depth >= cfg.max_depth or not candidates or not self._can_branch():
            return
        similarity = (
            st.embedder.matrix([t.question for t in candidates]) if cfg.strategy == "diverse" else None
        )
        room = st.room_for_debates()
        limit = cfg.max_branches if room is None else min(cfg.max_branches, room)
        chosen = select(cfg.strategy, candidates, limit, similarity)
        pairs: list[tuple[DebateNode, TensionNode]] = []
        for i, tension in enumerate(chosen, start=1):
            pairs.append(
                (self._new_branch(f"{debate.id}/b{i}", debate, tension, DebateOrigin.BRANCH), tension)
            )
        board = BranchBoard.start(debate, st.open_stubs())
        for branch, _ in pairs:
            board.add(branch)
        st.events.emit(
            "branches",
            debate=debate.id,
            count=len(pairs),
            candidates=len(candidates),
            selected=[(t.question, t.urgency) for _, t in pairs],
            stubbed=[(t.question, t.urgency) for t in candidates if t.status is TensionStatus.STUB],
        )
        for branch, _ in pairs:
            st.events.emit("branch_start", debate=branch.id, question=branch.question)
        # The debates run in parallel; everything after them that touches shared state
        # (stub statuses, revisits, sub-branches) runs in branch order, so the graph does
        # not depend on which branch finished first.
        await asyncio.gather(*(self.run_debate(b, board) for b, _ in pairs))
        for branch, tension in pairs:
            await self._after_branch(branch, tension)
        for branch, _ in pairs:
            await self.explore(branch)
        await self.merge([b for b, _ in pairs if b.status == "done"], debate)

    def _new_branch(
        self, branch_id: str, parent: DebateNode, tension: TensionNode, origin: DebateOrigin
    ) -> DebateNode:
        st, cfg = self.state, self.state.config
        tension.status = TensionStatus.SELECTED
        branch = DebateNode(
            id=branch_id,
            session=st.session_id,
            origin=origin,
            question=tension.question,
            depth=parent.depth + 1,
        )
        if cfg.router != "fixed":  # branches are created in order, so routing is deterministic
            branch.staff = st.router.choose(tension.category.value, cfg.leaf_count(), branch_id)
            st.events.emit("route", debate=branch_id, category=tension.category.value, staff=branch.staff)
        st.write(
            [tension, branch],
            [
                st.edge(branch.id, parent.id, EdgeType.BRANCHES_FROM),
                st.edge(branch.id, tension.id, EdgeType.EXPLORES),
                st.edge(branch.id, st.session_id, EdgeType.IN_SESSION),
            ],
        )
        return branch

    def credit(self, debate: DebateNode, category: str | None = None) -> dict[str, bool]:
        """After a debate, in a fixed order (never completion order, or later prompts would
        depend on latency): which specialists' contributions survived into its resolution.
        Survivors keep them in their context; a routed branch updates the router."""
        st, cfg = self.state, self.state.config
        outcome = self.outcomes.get(debate.id)
        if outcome is None:
            return {}
        said = {
            t.perspective: t.text for t in outcome.turns if t.role is Role.SPECIALIST and t.phase in CONTENT
        }
        survived = st.contexts.credit(said, debate.resolution, st.embedder, cfg.success_threshold)
        if category is not None and cfg.router != "fixed":
            for agent in dict.fromkeys(debate.staff or ()):
                st.router.update(category, agent, survived.get(agent, False))
        st.events.emit("credit", debate=debate.id, survived=sorted(a for a, ok in survived.items() if ok))
        return survived

    async def _after_branch(self, branch: DebateNode, tension: TensionNode) -> None:
        self.credit(branch, tension.category.value)
        tension.status = TensionStatus.EXPLORED
        self.state.write([tension])
        if branch.resolution:
            await self.revisit(branch, branch.resolution)

    # -- merging and relations ------------------------------------------------------
    def baseline(self) -> float:
        """How alike two independent texts of this run are anyway: the mean pairwise
        similarity of the main debate's first-round responses (written before anyone saw
        anyone). Small models make everything alike, so a merge must beat this, not only
        the absolute threshold."""
        if self._baseline is None:
            main = self.outcomes.get(f"{self.state.session_id}/main")
            texts = [
                t.text for t in (main.turns if main else []) if t.round == 1 and t.phase is Phase.RESPOND
            ]
            if len(texts) < 2:
                return 0.0
            m = self.state.embedder.matrix(texts)
            pairs = [float(m[i, j]) for i in range(len(texts)) for j in range(i + 1, len(texts))]
            self._baseline = round(sum(pairs) / len(pairs), 4)
        return self._baseline

    async def merge(self, branches: list[DebateNode], parent: DebateNode) -> None:
        st, cfg = self.state, self.state.config
        if len(branches) < 2:
            return
        sim = st.embedder.matrix([b.resolution for b in branches])
        baseline = self.baseline()
        merge_pairs, related = [], []
        for i in range(len(branches)):
            for j in range(i + 1, len(branches)):
                s = float(sim[i, j])
                if s >= cfg.merge_threshold and s >= baseline + cfg.merge_margin:
                    merge_pairs.append((i, j))
                elif s >= cfg.relation_threshold:
                    related.append((branches[j], branches[i], s))
        verdicts = await asyncio.gather(
            *(self._relation(later, earlier, parent) for later, earlier, _ in related)
        )
        edges = []
        for (later, earlier, s), (type_, reason) in zip(related, verdicts, strict=True):
            if type_ is EdgeType.CONTRADICTS:
                self.contradictions.append((later, earlier, reason))
            if type_ is not None:
                edges.append(st.edge(later.id, earlier.id, type_, similarity=round(s, 4), reason=reason))
                st.events.emit("relation", source=later.id, target=earlier.id, type=type_.value)
        st.write([], edges)
        for k, group in enumerate(components(len(branches), merge_pairs), start=1):
            members = [branches[i] for i in group]
            pair_sims = [float(sim[a, b]) for a in group for b in group if a < b]
            await self._synthesize(
                f"{parent.id}/syn{k}", members, parent, sum(pair_sims) / len(pair_sims), baseline
            )

    async def _relation(
        self, later: DebateNode, earlier: DebateNode, parent: DebateNode
    ) -> tuple[EdgeType | None, str]:
        """Related but not merged: does the later resolution contradict or elaborate the
        earlier one? The LLM decides; without it (off, budget, failure) they elaborate."""
        st, cfg = self.state, self.state.config
        fallback = (EdgeType.ELABORATES, "similar resolutions that did not converge")
        if not cfg.classify_relations or st.llm.exhausted(reserve_calls=2):
            return fallback
        messages = tpl.relation(self.frame(parent.question)(), (earlier.question, earlier.resolution),
                                (later.question, later.resolution))  # fmt: skip
        meta = CallMeta(agent="merger", debate=parent.id, phase="relation")
        done = await st.ask(messages, schema=RelationVerdict, max_tokens=cfg.max_flag_tokens, meta=meta)
        if done is None:
            return fallback
        verdict: RelationVerdict = done.parsed
        type_ = {"contradicts": EdgeType.CONTRADICTS, "elaborates": EdgeType.ELABORATES}.get(verdict.relation)
        return type_, verdict.reason.strip() or verdict.relation

    async def _synthesize(
        self, node_id: str, members: list[DebateNode], parent: DebateNode, similarity: float, baseline: float
    ) -> None:
        st, cfg = self.state, self.state.config
        if st.llm.exhausted(reserve_calls=1):
            return
        messages = tpl.synthesize(
            self.frame(parent.question)(), [(m.question, m.resolution) for m in members]
        )
        meta = CallMeta(agent="merger", debate=parent.id, phase="merge")
        done = await st.ask(messages, max_tokens=cfg.turn_tokens() * 2, meta=meta)
        if done is None:  # a skipped merge, not a lost run
            return
        synthesis = SynthesisNode(
            id=node_id,
            session=st.session_id,
            resolution=tidy(done.text),
            reason=f"resolution embeddings converge: mean cosine {similarity:.2f} >= {cfg.merge_threshold}, "
            f"and {similarity - baseline:+.2f} over this run's baseline {baseline:.2f} "
            f"(mean cosine between the main debate's independent first answers)",
            similarity=round(similarity, 4),
        )
        st.write(
            [synthesis],
            [st.edge(m.id, synthesis.id, EdgeType.MERGES_INTO) for m in members],
        )
        st.events.emit(
            "synthesis",
            node=synthesis.id,
            members=len(members),
            similarity=synthesis.similarity,
            reason=synthesis.reason,
        )
        await self.revisit(synthesis, synthesis.resolution)

    # -- stubs ---------------------------------------------------------------------
    async def revisit(self, node: GraphNode, text: str) -> None:
        """After a new node, check every open stub: superseded, relevant, or still open."""
        st, cfg = self.state, self.state.config
        relevant: list[TensionNode] = []
        async with st.revisit_lock:
            # A debate's own flags are what it left open, not what it answered.
            for stub in (t for t in st.open_stubs() if t.debate != node.id):
                sim = st.embedder.similarity(stub.question, text)
                edges = []
                parent = st.debates.get(stub.debate)
                if sim >= cfg.supersede_threshold:
                    outcome = "superseded"
                    reason = f"answered: cosine {sim:.2f} >= supersede threshold {cfg.supersede_threshold}"
                    stub.status = TensionStatus.SUPERSEDED
                    edges.append(st.edge(node.id, stub.id, EdgeType.SUPERSEDES, similarity=round(sim, 4)))
                elif (
                    sim >= cfg.revisit_threshold
                    and st.revisits_used < cfg.max_revisits
                    and parent is not None
                    and parent.depth < cfg.max_depth
                    and self._can_branch()
                ):
                    outcome = "relevant"
                    reason = (
                        f"relevant: cosine {sim:.2f} >= revisit threshold {cfg.revisit_threshold}; explored"
                    )
                    st.revisits_used += 1
                    relevant.append(stub)
                else:
                    outcome = "open"
                    reason = f"cosine {sim:.2f} below the revisit threshold {cfg.revisit_threshold}"
                    if sim >= cfg.revisit_threshold:
                        reason = "relevant, but no revisit, depth or budget left"
                stub.revisit_checks.append(
                    RevisitCheck(after=node.id, similarity=round(sim, 4), outcome=outcome, reason=reason)
                )
                st.events.emit(
                    "revisit_check", stub=stub.id, question=stub.question, outcome=outcome, after=node.id,
                    similarity=round(sim, 2),
                )  # fmt: skip
                st.write([stub], edges)
        for stub in relevant:
            parent = st.debates[stub.debate]
            branch = self._new_branch(f"{stub.id}/revisit", parent, stub, DebateOrigin.REVISIT)
            board = BranchBoard.start(parent, st.open_stubs())
            board.add(branch)
            st.events.emit("revisit", stub=stub.id)
            st.events.emit("branch_start", debate=branch.id, question=branch.question)
            await self.run_debate(branch, board)
            await self._after_branch(branch, stub)
            await self.explore(branch)
