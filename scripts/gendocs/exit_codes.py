"""exit-codes.md: the codes the CLI maps errors to, and the codes each command raises, found
in its source."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any

from .cli import root_command, walk_commands
from .markdown import HEADER, code, escape, first_paragraph, table
from .source import PACKAGE, member_comments


def command_of_function(root: Any) -> dict[tuple[str, str], str]:
    """(module, function) -> the command it implements, e.g. ("dagmca.cli.read", "check")."""
    found: dict[tuple[str, str], str] = {}
    for path, cmd in walk_commands(root, ("dagmca",)):
        callback = getattr(cmd, "callback", None)
        if callback is not None and len(path) > 1:
            found[(callback.__module__, callback.__qualname__)] = " ".join(path)
    return found


def exit_constants() -> dict[str, tuple[int, str, str]]:
    """Module-level int constants named *_EXIT in dagmca/cli: name -> (code, module, comment)."""
    found: dict[str, tuple[int, str, str]] = {}
    for path in sorted((PACKAGE / "cli").glob("*.py")):
        comments = member_comments(path)
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id.endswith("_EXIT")
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, int)
            ):
                name = node.targets[0].id
                found[name] = (node.value.value, f"dagmca.cli.{path.stem}", comments.get(name, ""))
    return found


def cli_functions() -> dict[tuple[str, str], ast.FunctionDef | ast.AsyncFunctionDef]:
    """Every top-level function of dagmca/cli: (module, name) -> its syntax tree."""
    found: dict[tuple[str, str], ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for path in sorted((PACKAGE / "cli").glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found[(f"dagmca.cli.{path.stem}", node.name)] = node
    return found


def module_aliases(module: str) -> dict[str, str]:
    """The names a cli module imports other cli modules under: alias -> module."""
    path = PACKAGE / "cli" / f"{module.rsplit('.', 1)[1]}.py"
    aliases: dict[str, str] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module == "dagmca.cli":
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"dagmca.cli.{alias.name}"
    return aliases


def exits_raised(root: Any) -> dict[int, set[str]]:
    """Every `typer.Exit(<code>)` (or `Exit(<NAME>_EXIT)`) a command raises, in its own
    function or in a function of dagmca/cli it calls: code -> the commands."""
    constants = {name: value for name, (value, _, _) in exit_constants().items()}
    functions = cli_functions()
    aliases = {module: module_aliases(module) for module, _ in functions}

    def calls(key: tuple[str, str]) -> Iterator[tuple[str, str]]:
        module, _ = key
        for node in ast.walk(functions[key]):
            if not isinstance(node, ast.Call):
                continue
            if isinstance(node.func, ast.Name):
                yield module, node.func.id
            elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
                target = aliases[module].get(node.func.value.id)
                if target:
                    yield target, node.func.attr

    def codes(key: tuple[str, str]) -> set[int]:
        found = set()
        for node in ast.walk(functions[key]):
            if not (isinstance(node, ast.Call) and node.args):
                continue
            target = node.func
            name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
            if name != "Exit":
                continue
            arg = node.args[0]
            value = arg.value if isinstance(arg, ast.Constant) else constants.get(getattr(arg, "id", ""))
            if isinstance(value, int) and value != 0:
                found.add(value)
        return found

    found: dict[int, set[str]] = {}
    for key, command in command_of_function(root).items():
        if key not in functions:
            continue
        seen, todo = {key}, [key]
        while todo:
            current = todo.pop()
            for value in codes(current):
                found.setdefault(value, set()).add(command)
            for callee in calls(current):
                if callee in functions and callee not in seen:
                    seen.add(callee)
                    todo.append(callee)
    return found


def page_exit_codes() -> str:
    from dagmca.cli import app as app_module

    root = root_command()
    out = [
        HEADER,
        "# Exit codes\n",
        "A command that ends for a reason the user can act on prints one line on stderr, "
        "`dagmca: error: <problem> — <fix>`, never a traceback, and exits with one of these "
        "codes. The library's errors carry no exit code: the CLI maps each kind of error to "
        "its code (`dagmca.cli.app.EXIT_CODES`, the first kind in this order that the error "
        "is an instance of decides).\n",
        "## Errors\n",
    ]
    rows = [
        [
            code(str(exit_code)),
            code(f"{kind.__module__}.{kind.__name__}"),
            escape(first_paragraph(kind.__doc__)),
        ]
        for kind, exit_code in app_module.EXIT_CODES
    ]
    out.append(table(["code", "error", "meaning"], rows))
    out.append("## Codes set by commands\n")
    constants = exit_constants()
    raised = exits_raised(root)
    rows = []
    for name, (value, module, comment) in sorted(constants.items(), key=lambda kv: (kv[1][0], kv[0])):
        cmds = ", ".join(code(c) for c in sorted(raised.get(value, ())))
        rows.append([code(str(value)), code(f"{module}.{name}"), escape(comment), cmds])
    named = {value for value, _, _ in constants.values()}
    for value in sorted(set(raised) - named):
        cmds = ", ".join(code(c) for c in sorted(raised[value]))
        rows.append([code(str(value)), "", "the command found what it checks for (see its page)", cmds])
    out.append(table(["code", "constant", "meaning", "raised by"], rows))
    out.append("## Always\n")
    out.append(
        table(
            ["code", "meaning"],
            [
                [code("0"), "the command did what it was asked"],
                [code("2"), "a usage error (an unknown option, a missing argument), also one line"],
                [code("130"), "stopped by the user (Ctrl-C); a run keeps every finished turn"],
            ],
        )
    )
    return "\n".join(out)
