"""`GraphStoreContract`: what every `GraphStore` must do, as pytest tests a store's
author runs against their own store.

Subclass it in a test module and give it a `store` fixture that yields an empty store
with its schema set up:

    import pytest
    from dagmca.testing import GraphStoreContract

    class TestMyStore(GraphStoreContract):
        @pytest.fixture
        def store(self, tmp_path):
            store = MyStore(tmp_path / "graph")
            store.init_schema()
            yield store
            store.close()

The tests ask nothing of the store beyond the `GraphStore` interface. Two of them need a
second store object on the same data (a resumed run, a second worker): override
`reopen` to run them; by default they are skipped. pytest is imported when a test runs,
not when this module is imported: install `dagmca[test]` (or pytest) to run the suite.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from dagmca.errors import SessionLinked, StoreError
from dagmca.graph import (
    EVALUATION_SESSION,
    FINDINGS_SESSION,
    PERSONA_SESSION,
    CallRecord,
    EdgeRecord,
    EdgeType,
    FindingKind,
    FindingNode,
    JudgeCheckNode,
    NodeKind,
    NodeRecord,
    node_from_record,
)
from dagmca.store.base import GraphStore
from dagmca.store.findings_check import check_findings
from dagmca.store.networkx_view import load_graph

if TYPE_CHECKING:
    import pytest

E = TypeVar("E", bound=BaseException)


def node(id_: str, kind: NodeKind = NodeKind.DEBATE, session: str = "s", **props: Any) -> NodeRecord:
    """A node record with the given properties, made at a fixed time."""
    return NodeRecord(id=id_, kind=kind, session=session, created_at="2026-01-01T00:00:00", props=props)


@contextmanager
def _raises(kind: type[E]) -> Iterator[pytest.ExceptionInfo[E]]:
    import pytest  # a test dependency: imported when a test runs, not with this module

    with pytest.raises(kind) as info:
        yield info


class GraphStoreContract:
    """The contract suite: each `test_*` method takes the `store` fixture the subclass
    provides. Methods a subclass adds run beside them."""

    def reopen(self, store: GraphStore) -> AbstractContextManager[GraphStore] | None:
        """Another store object on the same data as `store` (what a resumed run or a
        second worker opens), closed (if it is to be) when the context ends; None: the
        tests that need one are skipped."""
        return None

    def _reopened(self, store: GraphStore) -> AbstractContextManager[GraphStore]:
        other = self.reopen(store)
        if other is None:
            import pytest

            pytest.skip("reopen() is not given: no second store object on the same data")
        return other

    def test_init_is_idempotent(self, store: GraphStore) -> None:
        store.init_schema()
        store.init_schema()
        assert store.is_initialised()

    def test_upsert_replaces_properties_and_labels(self, store: GraphStore) -> None:
        stub = node("a", NodeKind.TENSION, question="q", status="stub").model_copy(
            update={"labels": ("Stub",)}
        )
        store.write([stub])
        store.write([node("a", NodeKind.TENSION, question="q", status="explored")])
        got = store.get_node("a")
        assert got is not None
        assert got.props == {"question": "q", "status": "explored"} and got.labels == ()
        assert len(store.nodes("s")) == 1

    def test_edges_are_unique_per_type_and_order_is_kept(self, store: GraphStore) -> None:
        store.write([node("a"), node("b"), node("c")])
        e = EdgeRecord(
            source="a", target="b", type=EdgeType.REFERENCES, session="s", props={"similarity": 0.8}
        )
        store.write([], [e, e])
        store.write([], [EdgeRecord(source="a", target="b", type=EdgeType.ELABORATES, session="s")])
        assert [x.type for x in store.edges("s")] == [EdgeType.REFERENCES, EdgeType.ELABORATES]
        assert store.edges("s", EdgeType.REFERENCES)[0].props == {"similarity": 0.8}
        assert [n.id for n in store.nodes("s")] == ["a", "b", "c"]

    def test_edges_are_counted_by_type_per_session(self, store: GraphStore) -> None:
        store.write(
            [node("a"), node("b"), node("c"), node("x", session="t")],
            [
                EdgeRecord(source="b", target="a", type=EdgeType.BRANCHES_FROM, session="s"),
                EdgeRecord(source="c", target="a", type=EdgeType.BRANCHES_FROM, session="s"),
                EdgeRecord(source="c", target="b", type=EdgeType.MERGES_INTO, session="s"),
                EdgeRecord(source="x", target="a", type=EdgeType.REFERENCES, session="t"),
            ],
        )
        assert store.edge_counts("s") == {EdgeType.BRANCHES_FROM: 2, EdgeType.MERGES_INTO: 1}
        assert store.edge_counts("t") == {EdgeType.REFERENCES: 1} and store.edge_counts("none") == {}

    def test_a_failed_write_leaves_nothing(self, store: GraphStore) -> None:
        bad = EdgeRecord(source="x", target="missing", type=EdgeType.NEXT, session="s")
        with _raises(StoreError):
            store.write([node("x")], [bad])
        assert store.get_node("x") is None

    def test_sessions_are_separate(self, store: GraphStore) -> None:
        store.write([node("s1", NodeKind.SESSION, session="s1"), node("s2", NodeKind.SESSION, session="s2")])
        store.write([node("d1", session="s1")])
        assert [s.id for s in store.sessions()] == ["s1", "s2"]
        assert {n.id for n in store.nodes("s1")} == {"s1", "d1"}
        assert store.has_session("s1") and not store.has_session("d1")

    def test_loads_into_a_multidigraph(self, store: GraphStore) -> None:
        store.write([node("a", title="t"), node("b")])
        store.write(
            [],
            [
                EdgeRecord(source="a", target="b", type=EdgeType.REFERENCES, session="s"),
                EdgeRecord(source="a", target="b", type=EdgeType.ELABORATES, session="s"),
            ],
        )
        g = load_graph(store, "s")
        assert g.is_multigraph() and g.is_directed()
        assert g.nodes["a"]["kind"] == "Debate" and g.nodes["a"]["title"] == "t"
        assert set(g["a"]["b"]) == {"REFERENCES", "ELABORATES"}

    def test_exploring_a_stub_keeps_its_edges(self, store: GraphStore) -> None:
        stub = node("t", NodeKind.TENSION, status="stub").model_copy(update={"labels": ("Stub",)})
        store.write(
            [stub, node("turn", NodeKind.TURN)],
            [EdgeRecord(source="t", target="turn", type=EdgeType.FLAGGED_AT, session="s")],
        )
        store.write([node("t", NodeKind.TENSION, status="explored")])
        store.write([stub])  # and back: labels follow the latest record
        assert store.get_node("t") == stub
        assert [(e.source, e.target) for e in store.edges("s", EdgeType.FLAGGED_AT)] == [("t", "turn")]

    def test_one_write_may_repeat_a_node(self, store: GraphStore) -> None:
        store.write([node("a", title="first"), node("a", title="second")])
        got = store.get_node("a")
        assert got is not None and got.props == {"title": "second"}

    def test_structured_values_round_trip(self, store: GraphStore) -> None:
        rec = node("a", n=3, f=0.25, flag=True, words=["x", "y"], empty=[], text='it\'s "quoted" \\ <b>')
        store.write([rec])
        assert store.get_node("a") == rec

    def test_a_judge_check_is_a_store_level_record_read_back_whole(self, store: GraphStore) -> None:
        checks = '[{"name": "position", "rate": 0.5, "lo": 0.3, "hi": 0.7, "n": 20, "status": "fail"}]'
        rec = JudgeCheckNode(
            id="judge-check-0123456789", session=EVALUATION_SESSION, judge_llm="openai", judge_model="m",
            endpoint="http://127.0.0.1:9/v1", judge_prompt_version="pair-2", tasks=16, checks=checks,
            status="fail", checked_at="2026-03-04T05:06:07.089+00:00",
            report='{"id": "judge-check-0123456789"}', created_at="2026-01-01T00:00:00",
        ).to_record()  # fmt: skip
        store.write([rec])
        assert store.get_node(rec.id) == rec
        assert store.nodes(EVALUATION_SESSION, NodeKind.JUDGE_CHECK) == [rec]
        assert all(s.id != EVALUATION_SESSION for s in store.sessions()), "no session of its own"

    def test_a_rounds_answer_tallies_read_back_apart(self, store: GraphStore) -> None:
        """A question session's round keeps its leaves' answers before its exchange and
        after it, each a JSON tally, apart (first-vote reads the first)."""
        rnd = node(
            "s/main/r1", NodeKind.ROUND, debate="s/main", number=1, answers='{"-1": 3}',
            answers_before='{"4": 2, "-1": 1}',
        )  # fmt: skip
        store.write([rnd])
        got = store.get_node("s/main/r1")
        assert got is not None and got.props["answers_before"] == '{"4": 2, "-1": 1}'
        assert got.props["answers"] == '{"-1": 3}'

    def test_timestamps_read_back_as_they_were_written(self, store: GraphStore) -> None:
        stamp = "2026-03-04T05:06:07.089+00:00"
        rec = NodeRecord(
            id="x", kind=NodeKind.SESSION, session="x", created_at=stamp,
            props={"started_at": stamp, "finished_at": "not a time", "title": stamp},
        )  # fmt: skip
        store.write([rec], [])
        assert store.get_node("x") == rec

    def test_call_records_are_kept_per_session_in_order(self, store: GraphStore) -> None:
        first = CallRecord(
            session="s", agent="L1N1", debate="s/main", phase="respond", prompt_tokens=10,
            completion_tokens=5, retries=2, faults=["rate_limited", "timeout"], latency_s=0.5,
        )  # fmt: skip
        second = CallRecord(session="s", agent="observer:skeptical", cache_hit=True, error="boom")
        store.record_calls([first])
        store.record_calls([second, CallRecord(session="other")])
        assert store.calls("s") == [first, second]
        assert len(store.calls("other")) == 1 and store.calls("none") == []
        assert store.nodes("s") == []  # accounting is not part of the graph

    def test_the_response_cache_keeps_the_first_value(self, store: GraphStore) -> None:
        assert store.cache_get("k") is None
        store.cache_put("k", "m", '{"text": "first \\u00e9"}')
        store.cache_put("k", "m", '{"text": "second"}')
        assert store.cache_get("k") == '{"text": "first \\u00e9"}'

    def test_the_cache_is_read_many_keys_at_once(self, store: GraphStore) -> None:
        """Kept vectors are read a batch at a time: more keys than one SQL statement binds."""
        for i in range(0, 1200, 2):
            store.cache_put(f"key-{i}", "m", f"value {i}")
        found = store.cache_get_many([f"key-{i}" for i in range(1200)] + ["key-0"])
        assert found == {f"key-{i}": f"value {i}" for i in range(0, 1200, 2)}
        assert store.cache_get_many([]) == {}

    def test_the_cache_and_the_call_log_are_pruned_by_age(self, store: GraphStore) -> None:
        store.cache_put("old", "m", "1")
        store.record_calls(
            [CallRecord(session="s", at="2020-01-01T00:00:00.000+00:00"), CallRecord(session="s")]
        )
        assert store.prune_llm("2000-01-01T00:00:00.000+00:00", calls=True) == (0, 0)
        assert store.prune_llm("2099-01-01T00:00:00.000+00:00") == (1, 0)  # the cache only
        assert store.cache_get("old") is None and len(store.calls("s")) == 2
        assert store.prune_llm("2021-01-01T00:00:00.000+00:00", calls=True) == (0, 1)
        assert len(store.calls("s")) == 1

    def test_the_graph_holds_no_call_log_or_cache(self, store: GraphStore) -> None:
        store.cache_put("k", "m", "v")
        store.record_calls([CallRecord(session="s")])
        assert store.nodes("s") == [] and store.sessions() == []

    def test_keyed_relationships_between_one_pair_stay_apart(self, store: GraphStore) -> None:
        store.write([node("t", NodeKind.TENSION), node("turn", NodeKind.TURN)])
        flags = [
            EdgeRecord(
                source="t",
                target="turn",
                type=EdgeType.FLAGGED_AT,
                session="s",
                props={"key": o, "observer": o},
            )
            for o in ("skeptical", "pragmatic")
        ]
        store.write([], flags)
        store.write([], flags[:1])  # the same flag again: an update, not a third edge
        got = store.edges("s", EdgeType.FLAGGED_AT)
        assert sorted(e.props["observer"] for e in got) == ["pragmatic", "skeptical"]
        assert sorted(e.key for e in got) == ["pragmatic", "skeptical"]

    def test_a_second_writer_of_the_same_ids_updates_them(self, store: GraphStore) -> None:
        """A resumed run or a second push: another store object, which did not create the
        nodes, writes them again: updates, never duplicates or a refused write."""
        first = EdgeRecord(source="a", target="b", type=EdgeType.NEXT, session="s")
        store.write([node("a", title="one"), node("b")], [first])
        with self._reopened(store) as other:
            other.write(
                [node("a", title="two"), node("b"), node("c")],
                [
                    EdgeRecord(source="a", target="b", type=EdgeType.NEXT, session="s", props={"n": 2}),
                    EdgeRecord(source="b", target="c", type=EdgeType.NEXT, session="s"),
                ],
            )
            other.write([node("c", title="three")])
        assert [n.id for n in store.nodes("s")] == ["a", "b", "c"]
        got_a = store.get_node("a")
        assert got_a is not None and got_a.props == {"title": "two"}
        got = [(e.source, e.target, e.props) for e in store.edges("s")]
        assert got == [("a", "b", {"n": 2}), ("b", "c", {})]

    def test_a_claim_is_one_workers_until_it_expires_or_is_released(self, store: GraphStore) -> None:
        assert store.claim("passage-a", "w1", 60) == "w1"
        assert store.claim("passage-a", "w2", 60) == "w1", "another worker's live claim"
        assert store.claim("passage-a", "w1", 60) == "w1", "its own worker renews it"
        assert store.claim("passage-b", "w2", 60) == "w2", "claims are per key"
        store.release("passage-a", "w2")  # not w2's: nothing happens
        assert store.claim("passage-a", "w2", 60) == "w1"
        store.release("passage-a", "w1")
        assert store.claim("passage-a", "w2", 0.3) == "w2"
        time.sleep(0.5)  # w2 stopped renewing: its claim expired
        assert store.claim("passage-a", "w3", 60) == "w3"
        assert store.claim("passage-a", "w4", 60) == "w3"
        assert store.claim("passage-a", "w4", 60, replacing="w3") == "w4", (
            "a dead worker's claim is taken over"
        )
        assert all(n.kind is not NodeKind.SESSION for n in store.sessions()), "claims are not graph nodes"

    def test_concurrent_claims_give_each_key_to_one_worker(self, store: GraphStore) -> None:
        """Threads with a store object each (as workers have) race for the same keys."""
        with self._reopened(store):  # skipped here, not in a thread, when there is none
            pass
        results: dict[str, list[str]] = {f"k{i}": [] for i in range(8)}
        errors: list[BaseException] = []

        def worker(name: str) -> None:
            try:
                with self._reopened(store) as own:
                    for key in results:
                        if own.claim(key, name, 60) == name:
                            results[key].append(name)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        assert all(len(winners) == 1 for winners in results.values()), results

    def test_deleting_a_session_removes_its_nodes_relationships_and_calls(self, store: GraphStore) -> None:
        two_sessions(store)
        assert store.delete_session("s1") == (3, 2, 2)
        assert store.get_node("s1") is None and store.nodes("s1") == [] and store.edges("s1") == []
        assert store.calls("s1") == [] and len(store.calls("s2")) == 1
        assert [s.id for s in store.sessions()] == ["s2"] and len(store.edges("s2")) == 1
        assert store.get_node("p") is not None, "personas outlive the sessions they played in"
        assert store.cache_get("k") == "kept", "the response cache is shared"
        assert store.delete_session("s1") == (0, 0, 0)
        with _raises(StoreError):
            store.delete_session(PERSONA_SESSION)

    def test_a_session_other_sessions_link_to_is_deleted_only_when_forced(self, store: GraphStore) -> None:
        two_sessions(store)
        # s2 (a later passage) answers s1's debate: s2's relationship into s1
        store.write([], [EdgeRecord(source="s2", target="s1/d", type=EdgeType.SUPERSEDES, session="s2")])
        with _raises(SessionLinked) as refused:
            store.delete_session("s1")
        assert refused.value.linked == ["s2"]
        assert len(store.nodes("s1")) == 3 and len(store.calls("s1")) == 2, "a refusal removes nothing"
        assert store.delete_session("s2") == (2, 2, 1), "s2's own links go with it"
        store.write(  # s2 again, with its link into s1
            [node("s2", NodeKind.SESSION, session="s2"), node("s2/d", session="s2")],
            [
                EdgeRecord(source="s2/d", target="s2", type=EdgeType.IN_SESSION, session="s2"),
                EdgeRecord(source="s2", target="s1/d", type=EdgeType.SUPERSEDES, session="s2"),
            ],
        )
        assert store.delete_session("s1", force=True) == (3, 3, 2)
        assert store.edges("s2") == [store.edges("s2", EdgeType.IN_SESSION)[0]]

    def test_a_finding_spans_sessions_and_keeps_them_from_deletion(self, store: GraphStore) -> None:
        two_sessions(store)
        store.write(
            [node("s1/t", NodeKind.TENSION, session="s1"), node("s2/t", NodeKind.TENSION, session="s2")]
        )
        finding = FindingNode(
            id="st/tension-1", session=FINDINGS_SESSION, study="st", aligns=FindingKind.TENSION, text="q",
            k=2, n=2, rate=1.0, lo=0.34, hi=1.0, core=True, sessions=["s1", "s2"], members=["s1/t", "s2/t"],
            samples=["s1", "s2"],
        )  # fmt: skip
        across = [
            EdgeRecord(source=finding.id, target="s1", type=EdgeType.SEEN_IN, session=FINDINGS_SESSION),
            EdgeRecord(source=finding.id, target="s2", type=EdgeType.SEEN_IN, session=FINDINGS_SESSION),
            EdgeRecord(source=finding.id, target="s1/t", type=EdgeType.AS, session=FINDINGS_SESSION),
            EdgeRecord(source=finding.id, target="s2/t", type=EdgeType.AS, session=FINDINGS_SESSION),
            EdgeRecord(
                source=finding.id, target="s2/t", type=EdgeType.COMPARED_WITH, session=FINDINGS_SESSION,
                props={"key": "s1/t", "member": "s1/t", "verdict": "match", "reason": "both ask q"},
            ),
        ]  # fmt: skip
        store.write([finding.to_record()], across)
        [got] = store.nodes(FINDINGS_SESSION, NodeKind.FINDING)
        assert node_from_record(got) == finding, "its lists and numbers read back as written"
        assert sorted((e.source, e.target, e.type) for e in store.edges(FINDINGS_SESSION)) == sorted(
            (e.source, e.target, e.type) for e in across
        )
        assert store.edges("s1", EdgeType.AS) == [], "a study's relationships are no session's own"
        assert check_findings(store, "st") == []
        with _raises(SessionLinked) as refused:
            store.delete_session("s1")
        assert refused.value.linked == [FINDINGS_SESSION], (
            "a session a finding is seen in is kept unless forced"
        )


def two_sessions(store: GraphStore) -> None:
    """s1 and s2, each a Session and a debate; s1's seat plays a persona."""
    store.write(
        [
            node("s1", NodeKind.SESSION, session="s1"),
            node("s1/d", session="s1"),
            node("s1/seat", NodeKind.AGENT, session="s1"),
            node("s2", NodeKind.SESSION, session="s2"),
            node("s2/d", session="s2"),
            node("p", NodeKind.PERSONA, session=PERSONA_SESSION),
        ],
        [
            EdgeRecord(source="s1/d", target="s1", type=EdgeType.IN_SESSION, session="s1"),
            EdgeRecord(source="s1/seat", target="p", type=EdgeType.PLAYS, session="s1"),
            EdgeRecord(source="s2/d", target="s2", type=EdgeType.IN_SESSION, session="s2"),
        ],
    )
    store.record_calls([CallRecord(session="s1"), CallRecord(session="s1"), CallRecord(session="s2")])
    store.cache_put("k", "m", "kept")
