"""Where the CLI writes: results to stdout, progress and errors to stderr."""

from __future__ import annotations

from rich.console import Console

out = Console()
err = Console(stderr=True)
