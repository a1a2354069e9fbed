"""The reference pages of the documentation (docs/reference/*.md), generated from the code.

One module a page family; `scripts/gen_docs.py` is the command that writes or checks them.
The output depends on the code only: everything is sorted or in the code's own order,
and nothing carries a date, a path of this machine or a value computed at run time.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from .api import page_api
from .cli import page_cli
from .exit_codes import page_exit_codes
from .house import PAGE as HOUSE_PAGE
from .house import architecture_page
from .layout import page_layout
from .metrics import page_metrics
from .reports import page_reports
from .schema import page_schema, undocumented_edges
from .settings import PAGE as SETTINGS_PAGE
from .settings import settings_page
from .source import ROOT

OUT = ROOT / "docs" / "reference"

PAGES: dict[str, Callable[[], str]] = {
    "cli.md": page_cli,
    "graph-schema.md": page_schema,
    "reports.md": page_reports,
    "metrics.md": page_metrics,
    "exit-codes.md": page_exit_codes,
    "api.md": page_api,
    "layout.md": page_layout,
}


# pages outside docs/reference/ with a generated part: the whole page as it should read
PARTS: dict[Path, Callable[[], str]] = {SETTINGS_PAGE: settings_page, HOUSE_PAGE: architecture_page}


def render_parts() -> dict[Path, str]:
    return {path: make() for path, make in PARTS.items()}


def render() -> dict[str, str]:
    pages = {}
    for name, make in PAGES.items():
        text = make()
        text = re.sub(r"\n{3,}", "\n\n", text).rstrip("\n") + "\n"
        pages[name] = text
    return pages


__all__ = ["OUT", "PAGES", "PARTS", "ROOT", "render", "render_parts", "undocumented_edges"]
