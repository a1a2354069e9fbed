"""Where the CLI writes: results to stdout, progress and errors to stderr; and how a
line of plain text is printed on either."""

from __future__ import annotations

from rich.console import Console

out = Console()
err = Console(stderr=True)


def plain(console: Console, text: str) -> None:
    """`text` as written: no markup read into it (a passage's "[x]" stays), nothing
    highlighted, and never wrapped at the console's width (a terminal wraps a long line
    itself; a pipe keeps it whole for whoever reads it)."""
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def said(text: str) -> None:
    """A line of results, on stdout."""
    plain(out, text)


def noted(text: str) -> None:
    """A line beside the results (progress, a note, a warning, an error), on stderr."""
    plain(err, text)
