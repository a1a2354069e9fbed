"""The version of dagmca's prompts as a whole: any change to a prompt's text that can
change an answer moves it, so that results made with other prompts are not read as
these prompts' (an eval's identity includes it)."""

from __future__ import annotations

PROMPT_VERSION = "2026-11-27"
