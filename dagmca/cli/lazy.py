"""A command group that imports a command's module only when that command is used.

Typer builds every command from its function's signature, so registering a function
imports its module, and with it whatever that module imports (the run commands'
engine, the evaluation, the model clients). Here a group knows its commands by name,
by where they live (`"read:query"`: the function `query` of dagmca/cli/read.py) and by
a one-line summary: the command list of `--help` is printed from the summaries, and a
command's module is imported the first time the command is looked up (to run it,
print its own help, or walk the tree for the reference pages).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any, ClassVar

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup

# A command as typer makes it (a TyperCommand, or a TyperGroup for a group of commands).
# Typer's groups are made of its own copy of click, a private module, so the types of
# that copy are not named here: a command, a click context and a help formatter are
# typed by what typer's public classes are.
Command = Any


@dataclass(frozen=True)
class Lazy:
    """A command of a group: its name, `"module:attribute"` (a module of dagmca.cli, and
    in it a command function or a Typer app for a group of commands), and the line the
    command list shows."""

    name: str
    target: str
    summary: str

    @property
    def module(self) -> str:
        return f"dagmca.cli.{self.target.partition(':')[0]}"

    def load(self) -> Command:
        found = getattr(importlib.import_module(self.module), self.target.partition(":")[2])
        if isinstance(found, typer.Typer):
            command: TyperCommand | TyperGroup = typer.main.get_group(found)
        else:
            single = typer.Typer(add_completion=False)
            single.command(self.name)(found)
            made = typer.main.get_command(single)
            if not isinstance(made, TyperCommand | TyperGroup):
                raise TypeError(f"{self.target} is not a typer command")
            command = made
        command.name = self.name
        command.short_help = self.summary
        return command


class LazyCommands(MutableMapping[str, Command]):
    """A group's commands by name: a name is listed without importing anything, and its
    command is built the first time it is looked up."""

    def __init__(self, entries: tuple[Lazy, ...], built: MutableMapping[str, Command]) -> None:
        self.entries = {e.name: e for e in entries}
        self.built = dict(built)
        self.names = [*self.entries, *(n for n in self.built if n not in self.entries)]

    def __getitem__(self, name: str) -> Command:
        if name not in self.built:
            self.built[name] = self.entries[name].load()  # KeyError: no such command
        return self.built[name]

    def __setitem__(self, name: str, command: Command) -> None:
        if name not in self.names:
            self.names.append(name)
        self.built[name] = command

    def __delitem__(self, name: str) -> None:
        self.names.remove(name)
        self.entries.pop(name, None)
        self.built.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self.names

    def __iter__(self) -> Iterator[str]:
        return iter(list(self.names))

    def __len__(self) -> int:
        return len(self.names)

    def listed(self, name: str) -> Command:
        """What the command list shows for `name`: the command if built, else a stand-in
        with its summary."""
        entry = self.entries.get(name)
        if entry is None or name in self.built:
            return self[name]
        return TyperCommand(name, short_help=entry.summary, help=entry.summary)


class LazyGroup(TyperGroup):
    """A Typer group whose `entries` are imported on first use (subclass it, set
    `entries`, and pass the subclass as the Typer app's `cls`)."""

    entries: ClassVar[tuple[Lazy, ...]] = ()

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.lazy = LazyCommands(self.entries, self.commands)
        self.commands = self.lazy

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.lazy)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        # printed by a plain group holding the stand-ins, so that no command is built
        listing = TyperGroup(
            name=self.name,
            commands={name: self.lazy.listed(name) for name in self.lazy},
            params=self.params,
            help=self.help,
            epilog=self.epilog,
            options_metavar=self.options_metavar,
            subcommand_metavar=self.subcommand_metavar,
            rich_markup_mode=self.rich_markup_mode,
        )
        listing.format_help(ctx, formatter)
