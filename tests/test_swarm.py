"""The swarm with a scripted model: specialization pays, a run resumes without
attempting a task twice, the stream is checked before any call, and a code task that
attacks the executor fails and the swarm goes on."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from dagmca.errors import UserError
from dagmca.executor import Limits
from dagmca.graph.store_nodes import TrackRecord
from dagmca.llm.base import Completion, Request
from dagmca.store.sqlite import SQLiteStore
from dagmca.swarm import graph
from dagmca.swarm.routers import parse_routers
from dagmca.swarm.tasks import SwarmTask, load_stream
from tests.support.executor import HARMFUL, leftovers
from tests.support.swarm import SkillModel, go, plan, stream


@pytest.mark.slow
def test_specialization_pays(tmp_path: Path) -> None:
    report = go(plan(stream(), ["affinity", "random"], repeats=3), SkillModel(), tmp_path / "s.db")
    rows = {r.router: r for r in report.routers}
    assert rows["affinity"].s >= 0.5
    acc = next(c for c in report.comparisons if c.measure == "accuracy")
    assert (acc.a, acc.b) == ("affinity", "random")
    assert rows["affinity"].accuracy > rows["random"].accuracy
    assert acc.p_holm < 0.05
    # random's S stays inside its noise floor, and inside S on the same stream with another seed
    assert rows["random"].s is not None and rows["random"].s_noise is not None
    assert rows["random"].s <= rows["random"].s_noise
    other = go(plan(stream(), ["random"], repeats=3, seed=2), SkillModel(), tmp_path / "s2.db").routers[0]
    assert abs(rows["random"].s - other.s) < 0.1
    assert rows["affinity"].s > max(rows["random"].s_noise, other.s_noise) + 0.2


def test_a_finished_swarm_run_again_makes_no_call(tmp_path: Path) -> None:
    p = plan(stream(40), ["greedy", "thompson"])
    first = SkillModel()
    report = go(p, first, tmp_path / "r.db")
    assert first.calls == 80 and report.attempted_now == 80
    again = SkillModel()
    report2 = go(p, again, tmp_path / "r.db")
    assert again.calls == 0 and report2.attempted_now == 0
    assert report2.routers == report.routers
    store = SQLiteStore(tmp_path / "r.db")
    assert graph.check_swarm(store, p.swarm_id) == []
    personas = {n.id: n.props for n in store.nodes("_agents")}
    assert sum(int(str(p["trials"])) for p in personas.values()) == 80
    store.close()


RESUME_SCRIPT = """
import asyncio, sys, time
sys.path.insert(0, {root!r})
from tests.support.swarm import SkillModel, plan, stream, go

class Slow(SkillModel):
    async def complete(self, *a, **k):
        await asyncio.sleep(0.02)
        return await super().complete(*a, **k)

go(plan(stream(60), ["affinity", "ucb"]), Slow(), __import__("pathlib").Path({db!r}))
"""


def _recorded(db: Path, swarm_id: str) -> int:
    """Attempts recorded so far (0 while the other process has not made the tables)."""
    try:
        store = SQLiteStore(db)
    except sqlite3.OperationalError:
        return 0
    try:
        return len(graph.attempts(store, swarm_id))
    except sqlite3.OperationalError:
        return 0
    finally:
        store.close()


@pytest.mark.slow
def test_killed_then_rerun_attempts_no_task_twice(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    script = RESUME_SCRIPT.format(root=str(Path(__file__).parents[1]), db=str(db))
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    p = plan(stream(60), ["affinity", "ucb"])
    deadline = 60.0
    while deadline > 0:  # killed once it has recorded some attempts, not all
        asyncio.run(asyncio.sleep(0.1))
        deadline -= 0.1
        if db.exists() and _recorded(db, p.swarm_id) >= 20:
            break
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    store = SQLiteStore(db)
    cut = len(graph.attempts(store, p.swarm_id))
    store.close()
    assert 20 <= cut < 120
    model = SkillModel()
    report = go(p, model, db)
    assert model.calls == 120 - cut
    store = SQLiteStore(db)
    assert graph.check_swarm(store, p.swarm_id) == []  # no position attempted twice
    assert len(graph.attempts(store, p.swarm_id)) == 120
    store.close()
    assert report.attempted_now == 120 - cut


def test_code_tasks_that_attack_the_executor_fail_and_the_swarm_goes_on(tmp_path: Path) -> None:
    tests = "assert add(2, 3) == 5\n"
    target = tmp_path / "escaped"
    harmful = {k: v.format(target=str(target), name="escaped-swarm", port=9) for k, v in HARMFUL.items()}
    replies = {
        f"write add ({k})": f"```python\n{code}\ndef add(a, b):\n    return a + b\n```"
        for k, code in harmful.items()
    }
    replies["write add"] = "```python\ndef add(a, b):\n    return a + b\n```"
    tasks = [
        SwarmTask(id=f"t{i}", type="math", prompt=prompt, tests=tests, entry_point="add")
        for i, prompt in enumerate(replies)
    ]

    class Coder(SkillModel):
        async def complete(self, request: Request) -> Completion:
            return Completion(text=replies[request.messages[-1]["content"]])

    limits = Limits(cpu_seconds=2, wall_seconds=8, memory_mb=256)
    report = go(plan(tasks, ["round-robin"], limits=limits), Coder(), tmp_path / "c.db")
    store = SQLiteStore(tmp_path / "c.db")
    done = graph.attempts(store, report.swarm_id, "round-robin", 0)
    store.close()
    assert [done[i].success for i in range(len(tasks))] == [False] * len(HARMFUL) + [True]
    assert not target.exists()
    assert leftovers() == []


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ({"id": "a", "type": "math", "question": "1+1?"}, "needs tests (code) or an answer"),
        ({"id": "a", "type": "code", "prompt": "f", "tests": "", "entry_point": "f"}, "needs tests"),
        ({"id": "a", "type": "x", "check": "essay", "question": "q", "answer": "1"}, "unknown check 'essay'"),
        ({"id": "a", "type": "bad type!", "question": "q", "answer": "1"}, "type 'bad type!'"),
        ({"id": "a", "question": "q", "answer": "1"}, "type: Field required"),
    ],
)
def test_bad_stream_is_one_line_before_any_call(tmp_path: Path, line: dict[str, Any], says: str) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(line) + "\n")
    with pytest.raises(UserError) as err:
        load_stream(path)
    assert says in err.value.line() and "\n" not in err.value.line()


def test_duplicate_ids_and_unknown_routers_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    line = json.dumps({"id": "a", "type": "m", "question": "q", "answer": "1"})
    path.write_text(f"{line}\n{line}\n")
    with pytest.raises(UserError, match="duplicate id 'a'"):
        load_stream(path)
    with pytest.raises(UserError, match="unknown router 'smart'"):
        parse_routers("affinity,smart")
    assert parse_routers("affinity, thompson") == ["affinity", "thompson"]


def test_code_tasks_take_asserts_or_a_check_function() -> None:
    t = SwarmTask(
        id="c",
        type="s",
        prompt="p",
        entry_point="f",
        tests=textwrap.dedent("def check(candidate):\n    assert candidate(1) == 2\n"),
    )
    assert t.test_code().rstrip().endswith("check(f)")


def test_the_personas_record_carries_both_ways(tmp_path: Path) -> None:
    """A debate's (or an earlier swarm's) record by type routes a swarm with --memory
    store; without it, the swarm starts from nothing. And the swarm's attempts join it."""
    from dagmca.debate.dag.personas import new_persona

    db = tmp_path / "m.db"
    store = SQLiteStore(db)
    store.init_schema()
    expert = new_persona("a2")
    expert.record = {"alpha": TrackRecord(trials=10, successes=10)}
    store.write([expert.to_record()])
    store.close()
    tasks = stream(4)
    remembered = go(plan(tasks, ["greedy"], memory="store"), SkillModel(), db)
    fresh = go(plan(tasks, ["greedy"], seed=5), SkillModel(), db)
    store = SQLiteStore(db)
    first = {
        r: graph.attempts(store, rep.swarm_id, "greedy", 0)[0].agent
        for r, rep in (("m", remembered), ("f", fresh))
    }
    record = store.get_node("agent/a2")
    store.close()
    assert first == {"m": "a2", "f": "a0"}
    assert record is not None and json.loads(str(record.props["record"]))["alpha"][0] > 10
