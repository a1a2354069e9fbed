"""The synthetic session the benchmarks use is shaped like a real one."""

from __future__ import annotations

from dagmca.graph import NodeKind
from dagmca.store.check import check_graph
from dagmca.store.networkx_view import build_graph
from tests.support.synthetic import synthetic_session


def test_exact_sizes_valid_and_deterministic() -> None:
    nodes, edges = synthetic_session(2_000, 2_500, session="x", seed=3)
    assert (len(nodes), len(edges)) == (2_000, 2_500)
    assert check_graph(build_graph("x", nodes, edges)) == []
    kinds = {n.kind for n in nodes}
    assert {NodeKind.SYNTHESIS, NodeKind.TENSION, NodeKind.FINAL} <= kinds
    assert any("Stub" in n.labels for n in nodes)
    again = synthetic_session(2_000, 2_500, session="x", seed=3)
    assert again == (nodes, edges)
