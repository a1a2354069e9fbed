"""Each metric on hand-made inputs with known values, then on a whole session."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chi2 as chi2_dist
from scipy.stats import chi2_contingency

from dagmca.graph import EdgeType, NodeKind
from dagmca.metrics import measures
from dagmca.metrics.session import CATEGORIES, SessionMetrics, session_metrics
from dagmca.similarity import HashingEmbedder
from tests.support.sessions import RunSession


def test_specialization_is_one_minus_normalised_entropy() -> None:
    cats = ["gap", "assumption", "contradiction", "open_question", "meta"]
    specialists = {"a": {"gap": 4}, "b": {"meta": 2}}
    assert measures.specialization(specialists, cats) == 1.0
    generalist = {"a": dict.fromkeys(cats, 3)}
    assert measures.specialization(generalist, cats) == pytest.approx(0.0, abs=1e-9)
    half = {"a": {"gap": 1, "assumption": 1}}  # H = ln 2 over ln 5
    assert measures.specialization(half, cats) == pytest.approx(1 - math.log(2) / math.log(5), abs=1e-4)
    # the mean over agents
    assert measures.specialization({**specialists, **{"c": dict.fromkeys(cats, 1)}}, cats) == pytest.approx(
        2 / 3, abs=1e-4
    )
    assert measures.specialization({}, cats) is None


def test_context_divergence_is_mean_pairwise_cosine_distance() -> None:
    e = np.eye(2)
    assert measures.context_divergence({"a": e[0], "b": e[1]}) == 1.0
    assert measures.context_divergence({"a": e[0], "b": 3 * e[0]}) == 0.0
    third = np.array([1.0, 1.0])
    expected = (1 + 2 * (1 - 1 / math.sqrt(2))) / 3
    assert measures.context_divergence({"a": e[0], "b": e[1], "c": third}) == pytest.approx(
        expected, abs=1e-4
    )
    assert measures.context_divergence({"a": e[0]}) is None


def test_differentiation_matches_scipy_and_a_hand_computation() -> None:
    cats = ["gap", "assumption", "meta"]
    counts = {"a": {"gap": 8, "assumption": 2, "meta": 1}, "b": {"gap": 1, "assumption": 7, "meta": 3},
              "c": {"gap": 2, "assumption": 2, "meta": 9}}  # fmt: skip
    chi2, dof, p = measures.differentiation(counts, cats)
    table = [[counts[a].get(c, 0) for c in cats] for a in counts]
    ref = chi2_contingency(table, correction=False)
    assert chi2 == pytest.approx(ref[0], abs=1e-3) and dof == ref[2] and p == pytest.approx(ref[1], abs=1e-6)
    # by hand: [[10, 0], [0, 10]], expected 5 everywhere: chi2 = 4 * 25 / 5 = 20, dof 1
    chi2, dof, p = measures.differentiation({"a": {"gap": 10}, "b": {"meta": 10}}, ["gap", "meta"])
    assert (chi2, dof) == (20.0, 1) and p == pytest.approx(math.erfc(math.sqrt(10)), rel=1e-4)
    # scipy's chi-square tail, on small and large statistics and degrees of freedom
    rng = random.Random(5)
    for _ in range(400):
        dof = rng.randint(1, 60)
        x = rng.choice([rng.uniform(0, 3 * dof), rng.uniform(0, 400), rng.uniform(0, 0.5)])
        assert measures.chi2_sf(x, dof) == pytest.approx(chi2_dist.sf(x, dof), rel=1e-9, abs=1e-300)
    assert measures.chi2_sf(0.0, 4) == 1.0
    # empty rows and columns are dropped; a 1 x k table tests nothing
    assert (
        measures.differentiation({"a": {"gap": 3, "meta": 1}, "b": {}}, ["gap", "meta", "assumption"]) is None
    )


def test_root_novelty_counts_root_sentences_no_child_said() -> None:
    e = HashingEmbedder()
    child = "Cats chase small mice every day."
    root = "Cats chase small mice every day. Quantum fields bend spacetime quite strongly."
    assert measures.root_novelty(root, [child], e) == 0.5
    assert measures.root_novelty(child, [child], e) == 0.0
    assert measures.root_novelty(root, [], e) == 1.0
    assert measures.root_novelty("", [child], e) is None


def test_sibling_similarity_and_the_alarms() -> None:
    assert measures.mean_sibling_similarity([["a b", "a c"], ["x"]]) == pytest.approx(1 / 3, abs=1e-4)
    assert measures.mean_sibling_similarity([["only child"]]) is None
    assert measures.collapse_alarm([0.4, 0.81]) and not measures.collapse_alarm([0.4, 0.8])
    assert (
        measures.bloat_alarm([40, 70])
        and not measures.bloat_alarm([40, 60])
        and not measures.bloat_alarm([40])
    )


def test_a_session_stores_its_metrics_and_the_command_prints_them(
    run_fake: RunSession, tmp_path: Path
) -> None:
    _, state, _ = run_fake(cpp=3, depth=2, rounds=2, max_depth=1, max_branches=2, monitor_every="turn")
    m = SessionMetrics.model_validate_json((tmp_path / "out" / "s1" / "metrics.json").read_text())
    flagged = [e for e in state.handles.store.edges("s1", EdgeType.FLAGGED_AT)]
    assert sum(sum(row.values()) for row in m.agent_categories.values()) == len(flagged) > 0
    assert set(m.agent_categories) <= {"analytical", "creative", "critical", "L0N1"}
    assert all(set(row) <= set(CATEGORIES) for row in m.agent_categories.values())
    assert m.specialization is not None and 0.0 <= m.specialization <= 1.0
    assert m.nodes == len(state.handles.store.nodes("s1")) and m.calls_per_node > 0
    main = next(d for d in m.debates if d.debate == "s1/main")
    assert len(main.sibling_similarity) == 2 and len(main.answer_length) == 2
    # on the nodes
    session = state.handles.store.get_node("s1")
    assert session is not None and session.props["specialization"] == m.specialization
    debate = next(n for n in state.handles.store.nodes("s1", NodeKind.DEBATE) if n.id == "s1/main")
    assert debate.props["revision_rate"] == main.lateral_revision_rate
    # recomputed from the store alone, the same numbers
    again = session_metrics(state.handles.store, "s1", HashingEmbedder())
    assert again.model_dump(exclude={"nodes"}) == m.model_dump(exclude={"nodes"})
    assert json.loads(again.model_dump_json())["differentiation_dof"] == m.differentiation_dof
