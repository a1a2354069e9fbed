"""cli.md: the Typer app walked as a click command tree, every command with its arguments
and options."""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Iterator
from typing import Any

from .markdown import HEADER, anchor, code, escape, first_paragraph, one_line, paragraphs, table


def subcommands(cmd: Any) -> list[tuple[str, Any]]:
    commands = getattr(cmd, "commands", None) or {}
    return sorted((name, sub) for name, sub in commands.items() if not getattr(sub, "hidden", False))


def walk_commands(cmd: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, cmd
    for name, sub in subcommands(cmd):
        yield from walk_commands(sub, (*path, name))


def param_kind(param: Any) -> str:
    kind = getattr(param, "param_type_name", None)
    if kind:
        return str(kind)
    return "argument" if not getattr(param, "opts", ["-"])[0].startswith("-") else "option"


def param_type(param: Any) -> str:
    """What a parameter takes: from Typer's annotation when it has one, else click's type."""
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return "flag"
    choices = getattr(getattr(param, "type", None), "choices", None)
    if choices:
        return " \\| ".join(code(str(c)) for c in choices)
    annotation = getattr(getattr(param, "type_descriptor", None), "annotation", None)
    if annotation is not None:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        origin = typing.get_origin(annotation)
        container = origin in (list, tuple, set) and args
        optional = origin in (typing.Union, types.UnionType) and len(args) == 1
        if container or optional:
            annotation = args[0]
        if typing.get_origin(annotation) is typing.Literal:
            return " \\| ".join(code(str(a)) for a in typing.get_args(annotation))
        if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
            return " \\| ".join(code(str(m.value)) for m in annotation)
        if isinstance(annotation, type):
            return {"str": "text", "int": "integer", "float": "number", "bool": "flag", "Path": "path"}.get(
                annotation.__name__, annotation.__name__.lower()
            )
    name = getattr(getattr(param, "type", None), "name", None)
    return str(name) if name else ""


def param_default(param: Any) -> str:
    if getattr(param, "required", False):
        return "required"
    default = getattr(param, "default", None)
    if default is None or callable(default) or getattr(param, "show_default", True) is False:
        return ""
    if default is False and getattr(param, "is_flag", False):
        return "off"
    if default is True and getattr(param, "is_flag", False):
        return "on"
    if isinstance(default, list | tuple) and not default:
        return ""
    return code(str(default.value if isinstance(default, enum.Enum) else default))


def envvars(param: Any) -> list[str]:
    found = getattr(param, "envvar", None)
    if not found:
        return []
    return [found] if isinstance(found, str) else list(found)


def usage(path: tuple[str, ...], cmd: Any) -> str:
    pieces = [*path]
    params = [p for p in getattr(cmd, "params", []) if not getattr(p, "hidden", False)]
    if any(param_kind(p) == "option" for p in params) or subcommands(cmd):
        pieces.append("[OPTIONS]")
    for p in params:
        if param_kind(p) != "argument":
            continue
        name = getattr(p, "metavar", None) or str(p.name).upper()
        if getattr(p, "nargs", 1) == -1:
            name += "..."
        pieces.append(name if getattr(p, "required", False) else f"[{name}]")
    if subcommands(cmd):
        pieces.append("COMMAND [ARGS]...")
    return " ".join(pieces)


def command_section(path: tuple[str, ...], cmd: Any) -> str:
    title = " ".join(path)
    out = [f"## `{title}`\n"]
    if getattr(cmd, "deprecated", False):
        out.append("!!! warning\n    Deprecated.\n")
    out.append(f"```\n{usage(path, cmd)}\n```\n")
    if cmd.help:
        out.append(paragraphs(cmd.help) + "\n")
    params = [p for p in getattr(cmd, "params", []) if not getattr(p, "hidden", False)]
    arguments = [p for p in params if param_kind(p) == "argument"]
    options = [p for p in params if param_kind(p) == "option"]
    if arguments:
        out.append("**Arguments**\n")
        rows = [
            [
                code(getattr(p, "metavar", None) or str(p.name).upper()),
                param_type(p),
                "required" if getattr(p, "required", False) else param_default(p) or "optional",
                escape(one_line(getattr(p, "help", None) or "")),
            ]
            for p in arguments
        ]
        out.append(table(["argument", "type", "default", "description"], rows))
    if options:
        out.append("**Options**\n")
        rows = []
        for p in options:
            names = " / ".join(code(o) for o in [*p.opts, *getattr(p, "secondary_opts", [])])
            if getattr(p, "multiple", False):
                names += " (repeatable)"
            env = ", ".join(code(e) for e in envvars(p))
            rows.append(
                [
                    names,
                    param_type(p),
                    param_default(p),
                    env,
                    escape(one_line(getattr(p, "help", None) or "")),
                ]
            )
        out.append(table(["option", "type", "default", "environment", "description"], rows))
    commands = subcommands(cmd)
    if commands:
        out.append("**Commands**\n")
        rows = [
            [f"[{code(' '.join((*path, n)))}](#{anchor(' '.join((*path, n)))})", escape(first_line(s.help))]
            for n, s in commands
        ]
        out.append(table(["command", "what it does"], rows))
    return "\n".join(out)


def first_line(help_text: str | None) -> str:
    return first_paragraph(help_text).split(". ")[0].rstrip(".") + "." if help_text else ""


def root_command() -> Any:
    import typer.main

    from dagmca.cli.app import app

    return typer.main.get_command(app)


def page_cli() -> str:
    root = root_command()
    out = [
        HEADER,
        "# Command line\n",
        "Every command of `dagmca`, its arguments and its options, as `dagmca COMMAND --help` "
        "gives them. A setting's option is also read from the environment variable named in "
        "its row; a flag given on the command line wins over the environment, which wins over "
        "the default. How settings combine is in the [configuration guide]"
        "(../guides/configuration.md); what each exit code means is in [Exit codes](exit-codes.md).\n",
    ]
    rows = [
        [f"[{code(' '.join(path))}](#{anchor(' '.join(path))})", escape(first_line(cmd.help))]
        for path, cmd in walk_commands(root, ("dagmca",))
        if len(path) > 1
    ]
    out.append(f"```\n{usage(('dagmca',), root)}\n```\n")
    own = [p for p in root.params if param_kind(p) == "option" and not getattr(p, "hidden", False)]
    if own:
        said = "; ".join(f"{code(p.opts[0])}: {escape(one_line(p.help or ''))}" for p in own)
        out.append(f"Options of `dagmca` itself: {said}\n")
    out.append(table(["command", "what it does"], rows))
    for path, cmd in walk_commands(root, ("dagmca",)):
        if len(path) > 1:
            out.append(command_section(path, cmd))
    return "\n".join(out)
