"""Write dagmca/config/overrides.py: the `Overrides` TypedDict, one key per setting of
`SessionConfig`, so that `Workspace.run(..., model="x")` and the other methods that take
settings as keywords are checked by a type checker, from the settings model itself.

    python scripts/gen_overrides.py           write the module
    python scripts/gen_overrides.py --check   exit 1 when the module differs from what
                                              the settings model gives (tests run this)
"""

from __future__ import annotations

import argparse
import enum
import re
import sys
import types
import typing
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "dagmca" / "config" / "overrides.py"

HEADER = '''"""The settings a caller may give as keywords (`Workspace.run(..., model="x")`): one
key per setting of `SessionConfig`, each as it is accepted. Generated from the settings
model by scripts/gen_overrides.py; a test fails when the two differ."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict

from dagmca.config.roles import RoleSettings
from dagmca.graph import ModelRole


'''

# The keyword settings of each entry. Where an entry has a parameter of a setting's name
# (a judge's client, an embedder object), that setting is left out: give it in
# `settings` there. The others add the left-out keys to the common ones.
COMMON = "OpenEvalOverrides"
VARIANTS = {
    COMMON: ("`dagmca.evaluate`'s: all but `embedder` and `judge`, its parameters there.", ()),
    "EvalOverrides": ("`Workspace.eval`'s: all but `judge`, its judge's client there.", ("embedder",)),
    "OpenOverrides": ("`dagmca.run`'s: all but `embedder`, the workspace's embedder there.", ("judge",)),
    "Overrides": ("Keyword settings: a key left out keeps the settings' value.", ("embedder", "judge")),
}
LEFT_OUT = {"embedder", "judge"}
# what a setting accepts beyond its stored type: a role by its name, its settings as a
# mapping (a tuple setting takes any sequence: `spelled` says so)
WIDER = {
    "roles": "Mapping[ModelRole | str, RoleSettings | Mapping[str, Any]]",
}


def spelled(tp: Any) -> str:
    """A type as source text."""
    if tp is type(None):
        return "None"
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Literal:
        return "Literal[" + ", ".join(repr(a).replace("'", '"') for a in args) + "]"
    if origin in (typing.Union, types.UnionType):
        return " | ".join(spelled(a) for a in args)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return f"Sequence[{spelled(args[0])}]"
    if origin is not None:
        return f"{origin.__name__}[{', '.join(spelled(a) for a in args)}]"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp.__name__
    return str(tp.__name__)


def render() -> str:
    sys.path.insert(0, str(ROOT))
    from dagmca.config import SessionConfig

    fields = SessionConfig.model_fields
    blocks = []
    for variant, (doc, added) in VARIANTS.items():
        base = "TypedDict, total=False" if variant == COMMON else COMMON + ", total=False"
        lines = [f"class {variant}({base}):", f'    """{doc}"""', ""]
        names = [n for n in fields if n not in LEFT_OUT] if variant == COMMON else list(added)
        for name in names:
            lines.append(f"    {name}: {WIDER.get(name) or spelled(fields[name].annotation)}")
        blocks.append("\n".join(lines) + "\n")
    text = HEADER + "\n\n".join(blocks)
    return re.sub(r"\bOptional\[(.*?)\]", r"\1 | None", text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if TARGET.read_text() != text:
            print(f"{TARGET.relative_to(ROOT)} differs from SessionConfig: run scripts/gen_overrides.py")
            return 1
        return 0
    TARGET.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
