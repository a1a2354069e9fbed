"""Settings from every source, through the real command line: flag > environment >
--profile > settings file (dagmca.toml, or [tool.dagmca] in pyproject.toml) > default;
`dagmca config show`; one clear line for each bad settings input; the options built
from the settings' fields; and stored sessions' flat settings still loading."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer

from dagmca.cli.app import app, main
from dagmca.config import SessionConfig
from dagmca.config.params import PARAMS
from dagmca.graph import ModelRole
from tests.support.sessions import PASSAGE

# one setting per layer: each is given by its own layer and by every layer below it,
# so that each pins that layer over all the lower ones
FILE = """
[engine]
cpp = 2
rounds = 2
depth = 3
perspectives = ["analytical", "critical"]
[llm]
seed = 7
[roles.judge]
model = "file-judge"
base_url = "http://file.invalid/v1"
api_key_env = "FILE_KEY"

[profiles.fast.engine]
cpp = 3
rounds = 3
depth = 1
[profiles.fast.roles.judge]
model = "profile-judge"
base_url = "http://profile.invalid/v1"

[profiles.slow.engine]
rounds = 5
"""
ENV = {
    "DAGMCA_CPP": "4",
    "DAGMCA_ROUNDS": "4",
    "DAGMCA_JUDGE_MODEL": "env-judge",
    "DAGMCA_OBSERVER_MODEL": "obs",
}
FLAGS = ["--cpp", "5", "--judge-model", "flag-judge", "--profile", "fast"]


class Seen(Exception):
    """Raised by a stand-in for a command's first step after its settings: the command
    got this far, with these settings, and spent nothing."""

    def __init__(self, cfg: SessionConfig) -> None:
        super().__init__("seen")
        self.cfg = cfg


def stop(cfg: SessionConfig, *args: Any, **kwargs: Any) -> None:
    raise Seen(cfg)


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.txt").write_text(PASSAGE, encoding="utf-8")
    return tmp_path


@pytest.fixture
def layered(here: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (here / "dagmca.toml").write_text(FILE, encoding="utf-8")
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)
    return here


def show(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, dict[str, Any]]:
    code = main(["config", "show", "--json", *args])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return {row["name"]: row for row in json.loads(captured.out)}


def fails(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code = main(list(args))
    captured = capsys.readouterr()
    assert code == 2, captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dagmca: error:"), captured.err
    assert "Traceback" not in captured.err
    return lines[0]


def test_config_show_gives_each_setting_its_value_and_source(
    layered: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = show(capsys, *FLAGS)
    file = f"file:{layered / 'dagmca.toml'}"
    expected = {
        "cpp": (5, "flag"),
        "rounds": (4, "env"),
        "depth": (1, "profile:fast"),
        "seed": (7, file),
        "perspectives": (["analytical", "critical"], file),
        "strange_loops": (0, "default"),  # the local model's default
        "judge.model": ("flag-judge", "flag"),
        "observer.model": ("obs", "env"),
        "judge.base_url": ("http://profile.invalid/v1", "profile:fast"),
        "judge.api_key_env": ("FILE_KEY", file),
        "judge.temperature": (None, "default"),
    }
    assert {k: (rows[k]["value"], rows[k]["source"]) for k in expected} == expected
    assert rows["cpp"]["group"] == "engine" and rows["seed"]["group"] == "llm"
    assert rows["judge.model"]["group"] == "roles"
    # every setting is listed, the session's and each role's
    assert len(rows) == len(PARAMS) and set(rows) == {p.key for p in PARAMS.values()}


@pytest.mark.slow
def test_each_layer_gives_way_to_the_one_above(layered: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert show(capsys)["cpp"]["source"] == "env"  # env over file
    assert show(capsys, "--profile", "fast")["depth"]["value"] == 1  # profile over file
    assert show(capsys, "--profile", "fast")["cpp"]["value"] == 4  # env over profile
    assert show(capsys, "--profile", "slow")["rounds"]["value"] == 4  # env over another profile
    assert show(capsys, "--profile", "slow")["depth"]["value"] == 3  # the file, under a profile without it
    assert show(capsys, "--rounds", "6")["rounds"] == {
        "name": "rounds",
        "group": "engine",
        "value": 6,
        "source": "flag",
    }


@pytest.mark.slow
def test_booleans_and_lists_from_the_environment_and_flags(
    here: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DAGMCA_SIGNALS", "0")
    monkeypatch.setenv("DAGMCA_OBSERVERS", "skeptical,pragmatic")
    rows = show(capsys)
    assert (rows["signals"]["value"], rows["signals"]["source"]) == (False, "env")
    assert rows["observers"]["value"] == ["skeptical", "pragmatic"]
    rows = show(capsys, "--signals", "--observers", "dialectical")
    assert (rows["signals"]["value"], rows["signals"]["source"]) == (True, "flag")
    assert rows["observers"]["value"] == ["dialectical"]
    assert show(capsys, "--request-timeout", "30")["request_timeout_s"]["value"] == 30.0


@pytest.mark.parametrize(
    ("command", "module", "step"),
    [
        (["run", "p.txt", "--dry-run"], "dagmca.cli.run", "show_projection"),
        (["estimate", "p.txt"], "dagmca.cli.run", "show_projection"),
        (["build", "p.txt"], "dagmca.cli.build", "check_backend"),
        (["compare", "p.txt"], "dagmca.cli.compare", "check_backend"),
    ],
)
def test_every_command_that_spends_gets_the_same_settings(
    layered: Path, monkeypatch: pytest.MonkeyPatch, command: list[str], module: str, step: str
) -> None:
    monkeypatch.setattr(f"{module}.{step}", stop)
    with pytest.raises(Seen) as seen:
        main([*command, *FLAGS, "--judge-temperature", "0.5"])
    cfg = seen.value.cfg
    assert (cfg.cpp, cfg.rounds, cfg.depth, cfg.seed) == (5, 4, 1, 7)
    judge = cfg.roles[ModelRole.JUDGE]
    assert (judge.model, judge.base_url, judge.api_key_env, judge.temperature) == (
        "flag-judge",
        "http://profile.invalid/v1",
        "FILE_KEY",
        0.5,
    )
    assert cfg.roles[ModelRole.OBSERVER].model == "obs" and ModelRole.MAP not in cfg.roles
    # the role's own calls run on its endpoint, as an OpenAI-compatible one
    assert (cfg.role(ModelRole.JUDGE).model, cfg.role(ModelRole.JUDGE).llm) == ("flag-judge", "openai")


def test_role_flags_reach_the_roles(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("dagmca.cli.run.show_projection", stop)
    argv = ["run", "p.txt", "--dry-run", "--observer-model", "o", "--map-base-url", "http://m.invalid/v1"]
    with pytest.raises(Seen) as seen:
        main([*argv, "--final-reasoning-effort", "high", "--debate-rpm", "30"])
    roles = seen.value.cfg.roles
    assert set(roles) == {ModelRole.OBSERVER, ModelRole.MAP, ModelRole.FINAL, ModelRole.DEBATE}
    assert roles[ModelRole.OBSERVER].model == "o" and roles[ModelRole.MAP].base_url == "http://m.invalid/v1"
    assert roles[ModelRole.FINAL].reasoning_effort == "high" and roles[ModelRole.DEBATE].rpm == 30.0


@pytest.mark.slow
def test_pyproject_tool_table_when_there_is_no_dagmca_toml(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject = here / "pyproject.toml"
    pyproject.write_text(
        '[project]\nname = "x"\n\n[tool.dagmca.engine]\ncpp = 6\n'
        '[tool.dagmca.roles.judge]\nmodel = "j"\n[tool.dagmca.profiles.quick.engine]\nrounds = 1\n',
        encoding="utf-8",
    )
    rows = show(capsys, "--profile", "quick")
    assert (rows["cpp"]["value"], rows["cpp"]["source"]) == (6, f"file:{pyproject}")
    assert (rows["judge.model"]["value"], rows["rounds"]["source"]) == ("j", "profile:quick")
    (here / "dagmca.toml").write_text("[engine]\ncpp = 7\n", encoding="utf-8")  # dagmca.toml wins
    assert show(capsys)["cpp"] == {
        "name": "cpp",
        "group": "engine",
        "value": 7,
        "source": f"file:{here / 'dagmca.toml'}",
    }
    (here / "dagmca.toml").unlink()
    pyproject.write_text('[project]\nname = "x"\n', encoding="utf-8")  # no [tool.dagmca]: no file
    assert show(capsys)["cpp"]["source"] == "default"


def test_config_names_another_file(
    layered: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    other = layered / "other.toml"
    other.write_text("[llm]\nseed = 11\n", encoding="utf-8")
    rows = show(capsys, "--config", "other.toml")
    assert (rows["seed"]["value"], rows["seed"]["source"]) == (11, f"file:{other}")
    assert rows["depth"]["source"] == "default"  # ./dagmca.toml is not read besides it
    monkeypatch.setenv("DAGMCA_CONFIG", str(other))
    assert show(capsys)["seed"]["value"] == 11


def test_config_show_prints_a_table(layered: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "show", "--profile", "fast"]) == 0
    printed = capsys.readouterr().out
    for needle in ("profile:fast", "engine", "judge.base_url", "env"):
        assert needle in printed


BAD_FILES = {
    "invalid TOML": ("[engine]\ncpp = \n", ["invalid TOML", "line 2"]),
    "unknown key": ("[engine]\ncpq = 3\n", ["unknown key engine.cpq", "did you mean engine.cpp?"]),
    "key in the wrong group": ("[llm]\ncpp = 3\n", ["unknown key llm.cpp", "did you mean engine.cpp?"]),
    "key outside a group": ("cpp = 3\n", ["unknown key cpp", "did you mean engine.cpp?"]),
    "unknown group": ("[engin]\ncpp = 3\n", ["unknown key engin", "did you mean engine?"]),
    "unknown role key": ('[roles.judge]\nmodle = "x"\n', ["roles.judge.modle", "roles.judge.model?"]),
    "wrong type": ('[engine]\ncpp = "three"\n', ["engine.cpp = 'three'", "valid integer"]),
    "out of range": ("[engine]\ncpp = 0\n", ["engine.cpp = 0", "greater than or equal to 1"]),
    "bad list": ('[engine]\nperspectives = "a,,b"\n', ["engine.perspectives", "not a name"]),
    "wrong type in a profile": (
        '[profiles.fast.engine]\nrounds = "x"\n',
        ["profiles.fast.engine.rounds = 'x'", "valid integer"],
    ),
    "not a role": (
        '[roles.juge]\nmodel = "x"\n',
        ["roles.juge: 'juge' is not a role", "did you mean judge?"],
    ),
    "not a table": ("engine = 3\n", ["engine must be a table"]),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_bad_settings_file_is_one_line_before_anything_is_spent(
    here: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    text, needles = BAD_FILES[case]
    path = here / "dagmca.toml"
    path.write_text(text, encoding="utf-8")
    line = fails(capsys, "run", "p.txt", "--llm", "fake")
    assert str(path) in line
    for needle in needles:
        assert needle in line, line
    assert not (here / ".dagmca").exists(), "a bad settings file must not create or touch the store"


def test_an_unknown_profile_lists_the_known_ones(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = fails(capsys, "config", "show", "--profile", "fast")
    assert "unknown profile 'fast'" in line and "there is no settings file" in line
    (here / "dagmca.toml").write_text(FILE, encoding="utf-8")
    line = fails(capsys, "run", "p.txt", "--llm", "fake", "--profile", "quick")
    assert "unknown profile 'quick'" in line and "fast, slow" in line


def test_bad_environment_and_missing_file_are_one_line(
    here: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DAGMCA_JUDGE_TEMPERATURE", "9")
    line = fails(capsys, "config", "show")
    assert "DAGMCA_JUDGE_TEMPERATURE=9 (--judge-temperature)" in line and "less than or equal to 2" in line
    monkeypatch.delenv("DAGMCA_JUDGE_TEMPERATURE")
    assert "settings file nope.toml does not exist" in fails(
        capsys, "config", "show", "--config", "nope.toml"
    )
    assert "--judge-temperature: " in fails(capsys, "config", "show", "--judge-temperature", "-1")


def _command(name: str) -> Any:
    group = typer.main.get_command(app)
    return group.commands[name]  # type: ignore[attr-defined]


def test_every_role_setting_is_an_option_with_its_variable_in_a_panel() -> None:
    for command in ("run", "estimate", "build", "compare"):
        params = {p.name: p for p in _command(command).params}
        for p in PARAMS.values():
            if p.role is None:
                continue
            option = params[p.name]
            assert p.flag in option.opts and option.envvar == p.env, (command, p.name)
            assert option.rich_help_panel == "Roles"
    run = {p.name: p for p in _command("run").params}
    assert run["judge_model"].opts == ["--judge-model"] and run["judge_model"].envvar == "DAGMCA_JUDGE_MODEL"
    assert run["cpp"].rich_help_panel == "Engine" and run["model"].rich_help_panel == "LLM"
    assert run["signals"].secondary_opts == ["--no-signals"]
    assert run["request_timeout_s"].opts == ["--request-timeout"]
    assert run["agent_timeout_s"].opts == ["--agent-timeout"]


def test_resume_and_revisit_keep_their_options() -> None:
    wanted = {"llm", "model", "base_url", "local_model", "max_llm_calls", "max_tokens", "max_cost_usd"}
    for command in ("resume", "revisit"):
        names = {p.name for p in _command(command).params}
        assert wanted | {"price_per_1k_prompt", "price_per_1k_completion", "store", "quiet"} <= names
        assert "cpp" not in names and "profile" not in names


def test_help_names_each_options_variable(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "--help"]) == 0
    printed = capsys.readouterr().out
    for needle in ("DAGMCA_CPP", "DAGMCA_JUDGE_MODEL", "--judge-base-url", "DAGMCA_PROFILE", "DAGMCA_CONFIG"):
        assert needle in printed


# a session's settings as an earlier version stored them: flat, without roles, with a
# retired setting
STORED = (
    '{"agent_context_size": 2, "agent_memory": "store", "agent_timeout_s": null, "agents": null, '
    '"base_url": null, "broadcast": false, "cache": true, "concurrency": 4, "context_window": null, '
    '"convergence": "jaccard", "convergence_threshold": 0.85, "cpp": 4, "decision_retries": 2, "depth": 2, '
    '"duplicate_prefilter": 0.6, "duplicate_threshold": 0.95, "endpoint_down_after": 8, '
    '"ensemble_voters": null, "fairness_lead": 1, "final_stubs": 5, "judge": "llm", "llm": "openai", '
    '"local_model": null, "max_branches": 3, "max_cost_usd": null, "max_depth": 1, "max_flag_tokens": null, '
    '"max_iterations": 2, "max_llm_calls": 200, "max_new_answers_per_agent": 2, '
    '"max_new_answers_total": null, "max_nodes": null, "max_open_stubs": 10, "max_passage_bytes": 200000, '
    '"max_retries": 5, "max_revisits": 1, "max_stub_checks": 8, "max_synthesis_tokens": null, '
    '"max_tokens": null, "max_turn_tokens": null, "max_vote_rounds": 6, "merge_threshold": 0.7, '
    '"model": "gpt-4o-mini", "monitor_every": "auto", "observer_calls": "siblings", '
    '"observers": ["dialectical", "skeptical", "pragmatic"], "pair_prefilter": 0.35, "passage_share": 0.5, '
    '"perspectives": ["analytical", "critical"], "price_per_1k_completion": null, '
    '"price_per_1k_prompt": null, "protocol": "mca", "reasoning_effort": null, "reference_threshold": 0.75, '
    '"relation_threshold": 0.5, "request_timeout_s": 120.0, "revisit_threshold": 0.5, "rounds": 3, '
    '"router": "fixed", "router_temperature": 0.05, "rpm": null, "sampling": null, "seed": 0, '
    '"self_reflect": false, "signals": true, "strange_loops": 1, "strategy": "diverse", '
    '"stub_prefilter": 0.3, "success_threshold": 0.5, "temperature": 0.0, "tpm": null, '
    '"urgency_threshold": 0.3}'
)


def test_a_stored_flat_config_from_before_still_loads() -> None:
    cfg = SessionConfig.model_validate_json(STORED)
    assert (cfg.llm, cfg.model, cfg.cpp, cfg.rounds, cfg.max_llm_calls) == (
        "openai",
        "gpt-4o-mini",
        4,
        3,
        200,
    )
    assert cfg.perspectives == ("analytical", "critical") and cfg.roles == {}
    stored = json.loads(STORED)
    del stored["relation_threshold"]
    # stored again, it is the same flat object, now with its (empty) roles and the
    # settings added since at their defaults
    again = json.loads(cfg.model_dump_json())
    assert {k: again[k] for k in stored} == stored and again["roles"] == {}
    added = {k: v for k, v in again.items() if k not in stored and k != "roles"}
    # at the defaults of its own backend (the bundled model has a few of its own)
    defaults = json.loads(SessionConfig(llm=cfg.llm).model_dump_json())
    assert added == {k: v for k, v in defaults.items() if k in added}


def test_every_setting_belongs_to_one_group() -> None:
    from dagmca.config.groups import GROUP_OF

    # a field declared on SessionConfig itself would have no group, file table or panel
    assert set(SessionConfig.model_fields) == set(GROUP_OF)


def test_a_settings_help_says_the_local_models_own_default_as_the_code_has_it() -> None:
    """Each setting the local model defaults otherwise (LOCAL_DEFAULTS) says its value
    there in its help, and says the one the code uses."""
    import re

    from dagmca.config.params import PARAMS
    from dagmca.config.session import LOCAL_DEFAULTS

    said = {
        name: m.group(1)
        for name, p in PARAMS.items()
        if p.role is None and (m := re.search(r"\(local model: ([^)]+)\)", p.info.description or ""))
    }
    shown = {k: "off" if v is False else "on" if v is True else str(v) for k, v in LOCAL_DEFAULTS.items()}
    assert said == shown
