"""The keyword settings the Python API takes are typed: one key per setting of
`SessionConfig`, generated from it, so the two cannot drift apart."""

from __future__ import annotations

import runpy
from pathlib import Path

from dagmca.config import SessionConfig
from dagmca.config.overrides import EvalOverrides, OpenEvalOverrides, OpenOverrides, Overrides

ROOT = Path(__file__).resolve().parent.parent


def test_the_overrides_module_is_what_the_settings_model_gives() -> None:
    generator = runpy.run_path(str(ROOT / "scripts" / "gen_overrides.py"))
    assert generator["main"](["--check"]) == 0


def test_every_setting_is_a_key_and_an_entry_leaves_out_only_its_own_parameters() -> None:
    settings = set(SessionConfig.model_fields)
    assert set(Overrides.__annotations__) == settings
    assert set(EvalOverrides.__annotations__) == settings - {"judge"}
    assert set(OpenOverrides.__annotations__) == settings - {"embedder"}
    assert set(OpenEvalOverrides.__annotations__) == settings - {"embedder", "judge"}
    assert not Overrides.__total__  # a key left out keeps the settings' value
