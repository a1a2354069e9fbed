"""`dagmca run --samples 3` as one unit: killed with SIGKILL while its samples run and
again while they are aligned, then run again with the same command, it asks no finished
call again and ends with what an uninterrupted run makes: the same three sessions and
the same findings."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from dagmca.graph import FINDINGS_SESSION
from dagmca.store.check import check_store
from dagmca.store.findings_check import check_findings
from dagmca.store.sqlite import SQLiteStore
from tests.support.cli import dagmca
from tests.support.determinism import relative
from tests.support.fault_server import FaultServer
from tests.support.resume import SETTINGS, cached_keys, kill_after, preflight_keys
from tests.support.sessions import PASSAGE

pytestmark = pytest.mark.slow  # three sessions against a server, four times

KEY = "sk-test-samples"
STUDY = "st"
SESSIONS = [f"{STUDY}-{i}" for i in (1, 2, 3)]


def findings(store: SQLiteStore) -> list[str]:
    """The study's findings and relationships, as comparable lines."""
    nodes = [f"{n.id} {sorted(n.props.items())}" for n in store.nodes(FINDINGS_SESSION)]
    edges = [
        f"{e.source} {e.type.value} {e.target} {sorted(e.props.items())}"
        for e in store.edges(FINDINGS_SESSION)
    ]
    return sorted(nodes) + sorted(edges)


def test_run_samples_killed_twice_resumes_without_asking_again(tmp_path: Path) -> None:
    passage = tmp_path / "p.txt"
    passage.write_text(PASSAGE, encoding="utf-8")
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": ""}
    with FaultServer(latency_s=0.02) as server:
        common = [
            "--llm", "openai", "--model", "fault-model", "--base-url", server.base_url,
            "--quiet", "--samples", "3", "--study", STUDY, "--ledger", "final", *SETTINGS,
        ]  # fmt: skip
        ref_db = tmp_path / "ref.db"
        ref = dagmca("run", str(passage), "--store", str(ref_db), *common, cwd=tmp_path, env=env)
        assert ref.returncode == 0, ref.stderr
        total = server.requests
        ref_keys = set(server.served) - preflight_keys(server)
        with SQLiteStore(ref_db) as st:
            expected = [relative(st, s) for s in SESSIONS], findings(st)
            judged = len(st.calls(STUDY))
            assert judged > 0 and check_findings(st, STUDY) == []

        # once while the samples run, once while their tensions and claims are judged
        for point in (total // 3, total - judged // 2):
            db = tmp_path / f"killed-{point}.db"
            argv = ["run", str(passage), "--store", str(db), *common]
            kill_after(argv, db, point, cwd=tmp_path, env=env)
            finished = cached_keys(db)
            assert len(finished) >= point - 1
            before = Counter(server.served)
            again = dagmca(*argv, cwd=tmp_path, env=env)
            assert again.returncode == 0, again.stderr
            asked_again = set(server.served - before)
            assert not asked_again & finished, f"kill at {point}: a finished call was asked again"
            assert finished | asked_again == ref_keys, "together they asked exactly what one run asks"
            with SQLiteStore(db) as st:
                for s in SESSIONS:
                    assert check_store(st, s) == []
                    node = st.get_node(s)
                    assert node is not None and node.props["status"] == "done"
                assert ([relative(st, s) for s in SESSIONS], findings(st)) == expected, f"kill at {point}"
                assert check_findings(st, STUDY) == []
