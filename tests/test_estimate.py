"""`dagmca estimate`: the projection brackets what a run then spends, for the default
configuration, a large one and a vote run (on the scripted fake, counted from the
store's call records)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.support.cli import dagmca

ROOT = Path(__file__).resolve().parents[1]
PASSAGE = ROOT / "examples" / "congestion_pricing.txt"
CONFIGS = {
    "default": [],
    "large": ["--cpp", "3", "--depth", "3", "--rounds", "3", "--max-branches", "3", "--max-depth", "2"],
    "vote": ["--protocol", "vote", "--agents", "4", "--max-branches", "2"],
}


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.slow
def test_a_run_spends_within_its_projection(name: str, tmp_path: Path) -> None:
    options = ["--llm", "fake", *CONFIGS[name]]
    projected = dagmca("estimate", str(PASSAGE), *options, "--json", cwd=tmp_path)
    assert projected.returncode == 0, projected.stderr
    p = json.loads(projected.stdout)
    assert set(p) >= {"calls", "prompt_tokens", "cost_usd"} and p["calls"]["min"] < p["calls"]["max"]
    db = tmp_path / "g.db"
    ran = dagmca("run", str(PASSAGE), "--store", str(db), "--quiet", *options, cwd=tmp_path, timeout=600)
    assert ran.returncode == 0, ran.stderr
    with sqlite3.connect(db) as con:
        records = [json.loads(r[0]) for r in con.execute("SELECT record FROM llm_calls")]
    calls = len(records)
    prompt = sum(r["prompt_tokens"] for r in records)
    assert p["calls"]["min"] <= calls <= p["calls"]["max"], (calls, p["calls"], p["by_kind"])
    assert p["prompt_tokens"]["min"] <= prompt <= p["prompt_tokens"]["max"], (prompt, p["prompt_tokens"])
    assert "projected" in ran.stdout and f"(made {calls:,})" in ran.stdout.replace("\n", " ")


@pytest.mark.slow
def test_dry_run_spends_nothing_and_needs_no_key(tmp_path: Path) -> None:
    proc = dagmca("run", str(PASSAGE), "--llm", "openai", "--model", "gpt-4o", "--dry-run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "all calls" in proc.stdout and "$" in proc.stdout
    assert not (tmp_path / ".dagmca").exists(), "a dry run opens no store"


def test_each_role_is_projected_at_its_own_models_prices() -> None:
    """A judge priced apart from the debaters: its calls cost at its price, the rest at
    the session's, and the whole is the sum of the roles."""
    from dagmca.config import SessionConfig
    from dagmca.config.roles import RoleSettings
    from dagmca.debate.estimate import project, role_pricing
    from dagmca.graph import ModelRole
    from dagmca.llm.prices import Prices

    text = PASSAGE.read_text()
    judge = RoleSettings(model="big", price_per_1k_prompt=10.0, price_per_1k_completion=30.0)
    cfg = SessionConfig(
        llm="openai", model="small", base_url="http://127.0.0.1:9", roles={ModelRole.JUDGE: judge}
    )
    cheap = Prices(0.001, 0.002, "test")
    p = project(cfg, text, cheap, "small", role_pricing(cfg))
    by_role = p.by_role
    assert by_role[ModelRole.JUDGE].model == "big" and by_role[ModelRole.DEBATE].model == "small"
    assert sum(r.calls.max for r in by_role.values()) == p.calls.max
    assert abs(sum(r.cost_usd.max for r in by_role.values()) - p.cost_usd.max) < 1e-3
    alone = project(cfg.model_copy(update={"roles": {}}), text, cheap, "small")
    assert alone.by_role[ModelRole.DEBATE].cost_usd == by_role[ModelRole.DEBATE].cost_usd
    # the judge's calls at 10,000 times the price
    assert by_role[ModelRole.JUDGE].cost_usd.max > 1000 * alone.by_role[ModelRole.JUDGE].cost_usd.max


@pytest.mark.parametrize("quiet", [True, False])
def test_a_quiet_run_projects_after_the_session_not_before_its_first_request(
    quiet: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The projection is printed before a run only when the run is not quiet; a quiet one
    makes it for the summary, so the tokenizer it loads does not delay the first request.
    Either way the summary carries it."""
    from dagmca.cli import app
    from dagmca.cli import run as run_cli

    order: list[str] = []
    project, in_session = run_cli.projection, run_cli.in_session

    def projecting(*args: object, **kwargs: object) -> object:
        order.append("projection")
        return project(*args, **kwargs)  # type: ignore[arg-type]

    def working(*args: object, **kwargs: object) -> object:
        order.append("session")
        return in_session(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(run_cli, "projection", projecting)
    monkeypatch.setattr(run_cli, "in_session", working)
    monkeypatch.chdir(tmp_path)
    argv = ["run", str(PASSAGE), "--store", str(tmp_path / "g.db"), "--llm", "fake"]
    argv += ["--quiet"] if quiet else []
    assert app.main(argv) == 0
    assert order == (["session", "projection"] if quiet else ["projection", "session"])
