"""A results table that keeps every word of a cell whole, a number above all: rich fits a
wide table to the terminal by narrowing its widest columns, down to breaking "0.81" or
"[12.5%," across lines. Here each column gets at least its longest word, the width left
goes where text is longest, and a table too wide for that at the terminal's width is
shown in parts, each repeating the columns that name a row."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rich import table as rich_table
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement


class Table(rich_table.Table):
    """`rich.table.Table` that never breaks a word of a cell; `keys`: how many of the
    first columns name a row, repeated in each part when the table is shown in parts."""

    def __init__(self, *args: Any, keys: int = 1, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.keys = keys

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        spans = [_span(console, options, column) for column in self.columns]
        parts = self._parts([low for low, _ in spans], options.max_width)
        if parts is None:  # one word wider than the terminal: rich's own fitting is all there is
            yield _plain(self, list(range(len(self.columns))), None, title=True, caption=True)
            return
        for n, part in enumerate(parts):
            widths = self._widths(part, spans, options.max_width)
            yield _plain(self, part, widths, title=n == 0, caption=n == len(parts) - 1)

    def _overhead(self, columns: int) -> int:
        """The width a part of `columns` columns takes beside its cells: padding and lines."""
        _, right, _, left = self.padding
        lines = 0 if self.box is None else columns - 1 + (2 if self.show_edge else 0)
        return columns * (left + right) + lines

    def _parts(self, lows: list[int], width: int) -> list[list[int]] | None:
        """The columns of each part (by index): the key columns, then as many of the rest
        as fit at their narrowest; None when a key column and one other do not fit."""
        keys = list(range(min(self.keys, len(lows))))
        parts: list[list[int]] = []
        current = list(keys)
        for i in range(len(keys), len(lows)):
            if _fits([*current, i], lows, self._overhead(len(current) + 1), width):
                current.append(i)
                continue
            if current == keys:
                return None
            parts.append(current)
            current = [*keys, i]
            if not _fits(current, lows, self._overhead(len(current)), width):
                return None
        parts.append(current)
        return parts

    def _widths(self, part: list[int], spans: list[tuple[int, int]], width: int) -> list[int]:
        """Each column of `part` at least its longest word; the width left shared out in
        proportion to how much more its longest line needs."""
        lows = [spans[i][0] for i in part]
        wants = [spans[i][1] - spans[i][0] for i in part]
        free = width - self._overhead(len(part)) - sum(lows)
        if sum(wants) <= free:
            return [low + want for low, want in zip(lows, wants, strict=True)]
        given = [free * want // sum(wants) for want in wants]
        return [low + extra for low, extra in zip(lows, given, strict=True)]


def _fits(part: list[int], lows: list[int], overhead: int, width: int) -> bool:
    return sum(lows[i] for i in part) + overhead <= width


def _span(console: Console, options: ConsoleOptions, column: rich_table.Column) -> tuple[int, int]:
    """A column's narrowest width that breaks no word, and its widest line, over its
    header and its cells."""
    cells = (column.header, *column.cells)
    measured = [Measurement.get(console, options, _renderable(console, cell)) for cell in cells]
    low = max(m.minimum for m in measured)
    return low, max(low, max(m.maximum for m in measured))


def _renderable(console: Console, cell: RenderableType) -> RenderableType:
    return console.render_str(cell) if isinstance(cell, str) else cell


def _plain(
    table: Table, part: list[int], widths: list[int] | None, *, title: bool, caption: bool
) -> rich_table.Table:
    """The columns `part` of `table` as a rich table of their own, at `widths`."""
    shown = rich_table.Table(
        title=table.title if title else None,
        caption=table.caption if caption else None,
        title_justify=table.title_justify,
        caption_justify=table.caption_justify,
        box=table.box,
        show_header=table.show_header,
        show_edge=table.show_edge,
        show_lines=table.show_lines,
        padding=table.padding,
        style=table.style,
        header_style=table.header_style,
        border_style=table.border_style,
        title_style=table.title_style,
        caption_style=table.caption_style,
    )
    shown.columns = [
        replace(table.columns[i], width=None if widths is None else widths[n]) for n, i in enumerate(part)
    ]
    shown.rows = table.rows
    return shown
