"""The CLI as users run it: a subprocess, real files, the real SQLite store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import assert_user_error, dagmca
from tests.support.sandbox import process_env
from tests.support.sessions import PASSAGE


@pytest.fixture
def passage(tmp_path: Path) -> Path:
    p = tmp_path / "p.txt"
    p.write_text(PASSAGE, encoding="utf-8")
    return p


BAD_FILES = {
    "missing": (None, "does not exist"),
    "empty": (b"", "is empty"),
    "whitespace": (b"  \n\t \n", "is empty"),
    "binary": (b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR", "looks binary"),
    "latin1": ("Caf\u00e9 cr\u00e8me, a passage in Latin-1.".encode("latin-1"), "not valid UTF-8"),
    "huge": (b"word " * 50_000, "over the limit"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
@pytest.mark.slow
def test_bad_passages_fail_cleanly_before_anything_is_written(tmp_path: Path, case: str) -> None:
    content, needle = BAD_FILES[case]
    path = tmp_path / f"{case}.txt"
    if content is not None:
        path.write_bytes(content)
    proc = dagmca("run", str(path), "--llm", "fake", cwd=tmp_path)
    assert_user_error(proc, needle, tmp_path)


@pytest.mark.slow
def test_passage_size_limit_is_configurable(tmp_path: Path, passage: Path) -> None:
    proc = dagmca("run", str(passage), "--llm", "fake", "--max-passage-bytes", "50", cwd=tmp_path)
    assert_user_error(proc, "over the limit of 50", tmp_path)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--cpp", "0"], "--cpp"),
        (["--depth", "0"], "--depth"),
        (["--convergence-threshold", "1.5"], "--convergence-threshold"),
        (["--convergence-threshold", "-0.1"], "--convergence-threshold"),
        (["--perspectives", "analytical;critical"], "not a name"),
        (["--perspectives", "[analytical, critical]"], "not a name"),
        (["--perspectives", "analytical,,critical"], "not a name"),
        (["--perspectives", "critical,critical"], "names repeat"),
        (["--protocol", "anarchy"], "--protocol"),
        (["--max-iterations", "-1"], "--max-iterations"),
        (["--agent-timeout", "0"], "--agent-timeout:"),
        (["--protocol", "vote", "--agents", "0"], "--agents"),
        (["--rounds", "-1"], "--rounds"),
        (["--strategy", "loudest"], "--strategy"),
        (["--llm", "gpt"], "--llm"),
        (["--urgency-threshold", "2"], "--urgency-threshold"),
        (["--cpp", "three"], "valid integer"),
        (["--session", "bad id!"], "session id"),
        (["--no-such-flag"], "No such option"),
    ],
)
@pytest.mark.slow
def test_bad_options_fail_cleanly(tmp_path: Path, passage: Path, args: list[str], needle: str) -> None:
    proc = dagmca("run", str(passage), "--llm", "fake", *args, cwd=tmp_path)
    assert_user_error(proc, needle, tmp_path)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--cpp", "0"], "--cpp"),
        (["--convergence-threshold", "2"], "--convergence-threshold"),
        (["--perspectives", "a|b"], "not a name"),
        (["--protocols", "mca"], "two or more"),
        (["--protocols", "mca,anarchy"], "unknown protocol 'anarchy'"),
        (["--protocols", "decompose,vote"], "needs the mca arm"),
    ],
)
@pytest.mark.slow
def test_compare_rejects_bad_values_before_any_call(
    tmp_path: Path, passage: Path, args: list[str], needle: str
) -> None:
    proc = dagmca("compare", str(passage), "--llm", "fake", *args, cwd=tmp_path)
    assert_user_error(proc, needle, tmp_path)


@pytest.mark.slow
def test_compare_prints_the_protocols_side_by_side(tmp_path: Path, passage: Path) -> None:
    args = ["compare", str(passage), "--llm", "fake", "--session", "c", "-q", "--rounds", "3"]
    proc = dagmca(*args, "--convergence-threshold", "1", "--strange-loops", "1", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for needle in ("mca", "decompose", "vote", "LLM calls", "lateral revision rate", "mean sibling",
                   "final length (words)", "c-mca", "c-decompose", "c-vote", "mca_report.json"):  # fmt: skip
        assert needle in proc.stdout, needle
    again = dagmca(*args, "--json", "--session", "d", "--convergence-threshold", "1", cwd=tmp_path)
    rows = {r["arm"]: r for r in json.loads(again.stdout)}
    # each arm says which protocol it ran: the matched vote baseline is an ensemble run
    assert {a: r["protocol"] for a, r in rows.items()} == {
        "mca": "mca",
        "decompose": "decompose",
        "vote": "ensemble",
    }
    # cpp=3, depth=2: 8 calls a round, 3 rounds, 1 strange loop; the baseline 5 + 1; the
    # vote baseline as many as mca: 13 independent answers, 11 votes, 1 final answer
    assert rows["mca"]["llm_calls"] == 3 * 8 + 1 and rows["decompose"]["llm_calls"] == 5 + 1
    assert rows["vote"]["llm_calls"] == rows["mca"]["llm_calls"]
    assert rows["mca"]["rounds"] == 3 and rows["decompose"]["rounds"] == 1
    assert len(rows["mca"]["mean_sibling_similarity"]) == 3
    assert rows["mca"]["tokens"] > rows["decompose"]["tokens"] > 0
    for row in rows.values():
        assert Path(tmp_path / row["report"]).is_file()
        assert dagmca("check", row["session"], cwd=tmp_path).returncode == 0
    clash = dagmca(*args, cwd=tmp_path)
    assert clash.returncode == 2 and "already exists" in clash.stderr


@pytest.mark.slow
def test_environment_settings_are_validated_too(tmp_path: Path, passage: Path) -> None:
    proc = dagmca("run", str(passage), cwd=tmp_path, env={"DAGMCA_LLM": "fake", "DAGMCA_DEPTH": "0"})
    assert_user_error(proc, "--depth", tmp_path)


@pytest.mark.slow
def test_run_then_every_reading_command(tmp_path: Path, passage: Path) -> None:
    proc = dagmca("run", str(passage), "--llm", "fake", "--session", "demo", "--quiet", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for needle in (
        "session demo",
        "status",
        "done",
        "LLM calls",
        "tokens",
        "wall time",
        "Debate",
        "IN_SESSION",
    ):
        assert needle in proc.stdout
    out = tmp_path / ".dagmca" / "sessions" / "demo"
    assert json.loads((out / "status.json").read_text())["status"] == "done"
    report = json.loads((out / "mca_report.json").read_text())
    assert report["convergence"]["rounds_used"] >= 1 and report["final_response"]
    assert json.loads((out / "final_state.json").read_text())["final"]

    assert dagmca("check", "demo", cwd=tmp_path).returncode == 0
    listed = dagmca("sessions", cwd=tmp_path)
    assert "demo" in listed.stdout
    shown = dagmca("show", "demo", cwd=tmp_path)
    assert shown.returncode == 0 and "Debate (main" in shown.stdout and "Final" in shown.stdout
    metrics = dagmca("metrics", "demo", cwd=tmp_path)
    assert metrics.returncode == 0 and "specialization S" in metrics.stdout
    assert "emergence ledger" in metrics.stdout
    as_json = json.loads(dagmca("metrics", "demo", "--json", cwd=tmp_path).stdout)
    assert as_json == json.loads((out / "metrics.json").read_text())

    exported = dagmca("export", "demo", "--format", "json", "-o", "demo.json", cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    data = json.loads((tmp_path / "demo.json").read_text())
    kinds = {n["kind"] for n in data["nodes"]}
    assert {"Session", "Debate", "Round", "Turn", "Agent", "Final"} <= kinds
    assert all({"source", "target", "type"} <= set(e) for e in data["edges"])
    ids = {n["id"] for n in data["nodes"]}
    assert all(e["source"] in ids and e["target"] in ids for e in data["edges"])

    again = dagmca("run", str(passage), "--llm", "fake", "--session", "demo", cwd=tmp_path)
    assert again.returncode == 2 and "already exists" in again.stderr


@pytest.mark.parametrize("command", ["show", "export", "check", "metrics"])
@pytest.mark.slow
def test_unknown_session(tmp_path: Path, passage: Path, command: str) -> None:
    assert (
        dagmca(
            "run", str(passage), "--llm", "fake", "--session", "real", "-q", "--max-depth", "0", cwd=tmp_path
        ).returncode
        == 0
    )
    proc = dagmca(command, "nope", cwd=tmp_path)
    assert proc.returncode == 2 and "no session 'nope'" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_reading_a_missing_store(tmp_path: Path) -> None:
    proc = dagmca("sessions", "--store", str(tmp_path / "none.db"), cwd=tmp_path)
    assert proc.returncode == 2 and "no store at" in proc.stderr


@pytest.mark.slow
def test_store_from_environment_and_db_init_twice(tmp_path: Path) -> None:
    env = {"DAGMCA_STORE": str(tmp_path / "env.db")}
    assert dagmca("db", "init", cwd=tmp_path, env=env).returncode == 0
    assert dagmca("db", "init", cwd=tmp_path, env=env).returncode == 0
    assert (tmp_path / "env.db").exists()
    assert dagmca("sessions", cwd=tmp_path, env=env).returncode == 0


@pytest.mark.slow
def test_openai_backend_without_credentials(tmp_path: Path, passage: Path) -> None:
    proc = dagmca("run", str(passage), "--llm", "openai", "--model", "m", cwd=tmp_path)
    assert proc.returncode == 2 and "OPENAI_API_KEY" in proc.stderr


@pytest.mark.slow
def test_doctor_reports_each_check_and_fails_when_one_fails(tmp_path: Path) -> None:
    ok = dagmca("doctor", "--llm", "fake", cwd=tmp_path)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.count(" ok ") >= 4 and "FAIL" not in ok.stdout
    assert "executor:" in ok.stdout and "seccomp" in ok.stdout
    bad = dagmca(
        "doctor", "--llm", "openai", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
        "--store", "bolt://127.0.0.1:9", cwd=tmp_path, env={"OPENAI_API_KEY": "sk-doctor-secret"},
    )  # fmt: skip
    assert bad.returncode == 1
    assert bad.stdout.count("FAIL") == 2 and "cannot reach Neo4j" in bad.stdout and "not usable" in bad.stdout
    assert "sk-doctor-secret" not in bad.stdout + bad.stderr


@pytest.mark.slow
def test_check_exits_1_on_a_broken_session(tmp_path: Path, passage: Path) -> None:
    import sqlite3

    run = dagmca(
        "run", str(passage), "--llm", "fake", "--session", "s", "--quiet", "--max-depth", "0", cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr
    with sqlite3.connect(tmp_path / ".dagmca" / "dagmca.db") as conn:
        conn.execute("DELETE FROM edges WHERE type = 'IN_SESSION'")
    proc = dagmca("check", "s", cwd=tmp_path)
    assert proc.returncode == 1 and "broken:" in proc.stdout


@pytest.mark.slow
def test_export_every_format_from_the_command_line(tmp_path: Path, passage: Path) -> None:
    run = dagmca(
        "run", str(passage), "--llm", "fake", "--session", "ex", "--quiet", "--max-depth", "0", cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr
    for fmt, ext in [("json", "json"), ("graphml", "graphml"), ("gexf", "gexf"), ("cypher", "cypher"),
                     ("mermaid", "mmd"), ("dot", "dot")]:  # fmt: skip
        proc = dagmca("export", "ex", "--format", fmt, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert (tmp_path / f"ex.{ext}").stat().st_size > 1000
    bad = dagmca("export", "ex", "--format", "pdf", cwd=tmp_path)
    assert bad.returncode == 2 and "graphml" in bad.stderr


def test_every_setting_with_a_help_text_is_an_option_of_run_declared_once() -> None:
    import typer

    from dagmca.cli.app import app
    from dagmca.cli.options import flag
    from dagmca.config import SessionConfig

    settings = {name for name, f in SessionConfig.model_fields.items() if f.description}
    run = next(c for c in typer.main.get_command(app).commands.values() if c.name == "run")  # type: ignore[attr-defined]
    params = {p.name: p for p in run.params}
    assert settings <= set(params), settings - set(params)
    for name in settings:
        p = params[name]
        assert flag(name) in p.opts and p.envvar == f"DAGMCA_{name.upper()}"
        assert SessionConfig.model_fields[name].description in (p.help or "")
    compare = next(c for c in typer.main.get_command(app).commands.values() if c.name == "compare")  # type: ignore[attr-defined]
    for p in compare.params:  # the same option, not a second declaration with another help
        if p.name in settings:
            assert (p.opts, p.help, p.envvar) == (
                params[p.name].opts,
                params[p.name].help,
                params[p.name].envvar,
            )


@pytest.mark.slow
def test_sessions_keeps_each_id_whole_on_an_80_column_terminal(tmp_path: Path, passage: Path) -> None:
    """An id is what a user copies into the next command: a narrow terminal shortens the
    title, never the id."""
    sid = "congestion-pricing-essay-2026-11-25-long-id"
    ran = dagmca(
        "run", str(passage), "--llm", "fake", "--session", sid, "-q", "--max-depth", "0", cwd=tmp_path
    )
    assert ran.returncode == 0, ran.stderr
    listed = dagmca("sessions", cwd=tmp_path, env={"COLUMNS": "80"})
    assert listed.returncode == 0
    assert sid in listed.stdout
    assert max(len(line) for line in listed.stdout.splitlines()) <= 80


# which of the command modules, and of the heavy libraries, a process has imported
_LOADED = (
    "import json, sys\n"
    "from dagmca.cli.app import main\n"
    "code = main(sys.argv[1:])\n"
    "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('dagmca.cli.', 'dagmca.api', "
    "'dagmca.debate', 'numpy', 'torch', 'networkx', 'openai', 'mcp', 'httpx')))), file=sys.stderr)\n"
    "raise SystemExit(code)\n"
)


def _loaded(cwd: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", _LOADED, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=process_env(None),
        timeout=120,
    )
    return proc, set(json.loads(proc.stderr.strip().splitlines()[-1]))


def test_help_and_query_import_only_their_own_command(tmp_path: Path) -> None:
    from dagmca.cli.app import Commands

    modules = {e.module for e in Commands.entries}
    helped, loaded = _loaded(tmp_path, "--help")
    assert helped.returncode == 0
    for entry in Commands.entries:  # every command listed, by its summary
        assert entry.name in helped.stdout and entry.summary in helped.stdout, entry.name
    assert not loaded & modules, "--help must not import a command's module"
    assert not {m.split(".")[0] for m in loaded} & {"numpy", "torch", "networkx", "openai", "mcp", "httpx"}
    store = tmp_path / "s.db"
    assert dagmca("db", "init", "--store", str(store), cwd=tmp_path).returncode == 0
    queried, loaded = _loaded(
        tmp_path, "query", "MATCH (d:Debate) RETURN count(d) AS c", "--json", "--store", str(store)
    )
    assert queried.returncode == 0, queried.stderr
    assert json.loads(queried.stdout) == [{"c": 0}]
    assert loaded & modules == {"dagmca.cli.read"}
    assert not {m for m in loaded if m.startswith(("dagmca.api", "dagmca.debate", "numpy", "openai"))}


def test_every_listed_command_is_built_from_its_module() -> None:
    import typer.main

    from dagmca.cli.app import Commands, app

    group = typer.main.get_command(app)
    for entry in Commands.entries:
        command = group.commands[entry.name]  # type: ignore[attr-defined]
        assert command.name == entry.name and command.short_help == entry.summary
        assert "\n" not in entry.summary and len(entry.summary) <= 70, entry.name
        callback = getattr(command, "callback", None)
        if callback is not None and getattr(command, "commands", None) is None:
            assert callback.__module__ == entry.module, entry.name
    assert set(group.commands) == {e.name for e in Commands.entries}  # type: ignore[attr-defined]
    assert group.get_command(None, "no-such-command") is None  # type: ignore[arg-type]
