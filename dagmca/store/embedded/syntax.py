"""The tokens and the syntax tree of the read-only Cypher the embedded store runs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from dagmca.errors import UserError


class CypherSyntaxError(UserError):
    """A query that is not Cypher (or not the part of it this engine reads)."""


class Unsupported(UserError):
    """Cypher the embedded store cannot run (a write, a procedure, a clause or function
    it lacks): the message names it."""

    def __init__(self, problem: str, fix: str = "") -> None:
        super().__init__(problem, fix or "run it on Neo4j: `dagmca push SESSION --to bolt://…`, then --store")


@dataclass(frozen=True)
class Token:
    kind: str  # name, quoted, string, number, param, op, eof
    text: str
    value: Any
    start: int
    end: int


_TOKEN = re.compile(
    r"""
    (?P<space>\s+|//[^\n]*|/\*.*?\*/)
  | (?P<number>0x[0-9A-Fa-f]+|0o[0-7]+|\d+\.\d+(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|\d+(?:[eE][-+]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<quoted>`(?:[^`]|``)*`)
  | (?P<string>'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*")
  | (?P<param>\$(?:[A-Za-z_][A-Za-z0-9_]*|\d+|`[^`]+`))
  | (?P<op>\.\.|::|\|\||<>|!=|<=|>=|=~|[-+*/%^=<>(){}\[\],.:|;&!$])
    """,
    re.VERBOSE | re.DOTALL,
)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "\\": "\\", "'": "'", '"': '"'}


def _unescape(body: str) -> str:
    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", lambda m: _escape(m.group(1)), body)


def _escape(code: str) -> str:
    return chr(int(code[1:], 16)) if code.startswith("u") and len(code) == 5 else _ESCAPES.get(code, code)


def _number(raw: str) -> int | float:
    """A number literal: decimal, hexadecimal (0x1F), octal (0o17) or a float (1.5, .5, 1e3)."""
    if raw[:2] in ("0x", "0o"):
        return int(raw[2:], 16 if raw[1] == "x" else 8)
    return float(raw) if any(c in raw for c in ".eE") else int(raw)


def position(text: str, offset: int) -> str:
    """Where `offset` is, as Neo4j says it: line and column (from 1), and the offset."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line}, column {column}, offset {offset}"


def tokenize(text: str) -> list[Token]:
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        found = _TOKEN.match(text, pos)
        if found is None:
            raise CypherSyntaxError(
                f"cannot read the query: unexpected character {text[pos]!r} ({position(text, pos)})"
            )
        kind = found.lastgroup or ""
        raw = found.group()
        if kind != "space":
            value: Any = raw
            if kind == "number":
                value = _number(raw)
            elif kind == "string":
                value = _unescape(raw[1:-1])
            elif kind == "quoted":
                value, kind = raw[1:-1].replace("``", "`"), "name"
            elif kind == "param":
                value = raw[1:].strip("`")
            tokens.append(Token(kind, raw, value, found.start(), found.end()))
        pos = found.end()
    tokens.append(Token("eof", "", None, len(text), len(text)))
    return tokens


# -- expressions ----------------------------------------------------------------


class Expr:
    """An expression; `text` is how the query wrote it (a column's default name)."""

    text: str = ""


@dataclass
class Literal(Expr):
    value: Any


@dataclass
class Param(Expr):
    name: str


@dataclass
class Var(Expr):
    name: str


@dataclass
class Prop(Expr):
    subject: Expr
    key: str


@dataclass
class Index(Expr):
    subject: Expr
    index: Expr


@dataclass
class Slice(Expr):
    subject: Expr
    start: Expr | None
    stop: Expr | None


@dataclass
class ListExpr(Expr):
    items: list[Expr]


@dataclass
class MapExpr(Expr):
    items: dict[str, Expr]


@dataclass
class Unary(Expr):
    op: str  # not, -, +, is null, is not null
    operand: Expr


@dataclass
class Binary(Expr):
    op: str
    left: Expr
    right: Expr


@dataclass
class TypePredicate(Expr):
    """`x IS :: INTEGER`, `x IS NOT TYPED STRING`, `x :: LIST<ANY>`: `type` is a
    `types.CypherType`."""

    subject: Expr
    type: Any
    negated: bool = False


@dataclass
class Call(Expr):
    name: str  # lower case, dotted for namespaced functions
    args: list[Expr]
    distinct: bool = False
    star: bool = False  # count(*)
    written: str = ""  # the name as the query spells it, for messages


@dataclass
class Case(Expr):
    subject: Expr | None
    whens: list[tuple[Expr, Expr]]
    default: Expr | None


@dataclass
class Comprehension(Expr):
    var: str
    source: Expr
    where: Expr | None
    project: Expr | None


@dataclass
class Exists(Expr):
    """`EXISTS { MATCH … WHERE … }`, or a pattern used as a predicate (`bare`)."""

    patterns: list[PathPattern]
    where: Expr | None
    bare: bool = False


@dataclass(frozen=True)
class LabelExpr:
    """A label expression: `op` is label (`name`), and, or, not (of `parts`), or any (`%`)."""

    op: str
    name: str = ""
    parts: tuple[LabelExpr, ...] = ()

    def plain(self) -> list[str] | None:
        """The labels of a plain conjunction (`:A:B`, `A&B`), else None."""
        if self.op == "label":
            return [self.name]
        if self.op == "and":
            found = [part.plain() for part in self.parts]
            return None if any(f is None for f in found) else [x for f in found for x in f or []]
        return None


@dataclass
class HasLabels(Expr):
    """`n:A`, `n:A:B`, `n:A|B`: whether a node's labels (a relationship's type) fit."""

    subject: Expr
    labels: LabelExpr


@dataclass
class MapProjection(Expr):
    """`n {.a, .*, k: expr, v}`: items are (kind, key, expression) with kind prop, all,
    var or pair."""

    subject: Expr
    items: list[tuple[str, str, Expr | None]]


@dataclass
class Reduce(Expr):
    accumulator: str
    initial: Expr
    var: str
    source: Expr
    body: Expr


@dataclass
class PatternComprehension(Expr):
    path: PathPattern
    where: Expr | None
    project: Expr


@dataclass
class Subquery(Expr):
    """`COUNT { … }`, `EXISTS { … }` or `COLLECT { … }` around a full query."""

    kind: str  # count, exists, collect
    query: Query


# -- patterns -------------------------------------------------------------------


@dataclass
class NodePattern:
    var: str | None
    labels: list[str]
    props: dict[str, Expr]
    label_expr: LabelExpr | None = None  # when the labels are more than a conjunction
    where: Expr | None = None  # `(n WHERE …)`, moved into the clause's WHERE


@dataclass
class RelPattern:
    var: str | None
    types: list[str]  # alternatives (`:A|B`); a richer expression is in `type_expr`
    direction: str  # out (->), in (<-), both (-)
    props: dict[str, Expr]
    min_hops: int = 1
    max_hops: int | None = 1  # None: unbounded
    variable_length: bool = False
    where: Expr | None = None  # `-[r WHERE …]-`, moved into the clause's WHERE
    type_expr: LabelExpr | None = None  # `:A&B`, `:!A`, `:%`: more than alternatives


@dataclass
class PathPattern:
    var: str | None
    nodes: list[NodePattern]
    rels: list[RelPattern]
    # a shortest-path search: (kind, k) with kind shortestPath, allShortestPaths,
    # shortest, all (ALL SHORTEST), groups (SHORTEST k GROUPS) or any (ANY k)
    selector: tuple[str, int] | None = None


# -- clauses ----------------------------------------------------------------------


@dataclass
class Match:
    patterns: list[PathPattern]
    where: Expr | None
    optional: bool = False


@dataclass
class Unwind:
    expr: Expr
    alias: str


@dataclass
class Item:
    expr: Expr
    alias: str
    aliased: bool = True  # written with AS (or a variable, which names itself)


@dataclass
class Projection:
    """WITH or RETURN."""

    items: list[Item]
    star: bool = False
    distinct: bool = False
    order: list[tuple[Expr, bool]] = field(default_factory=list)  # (expression, descending)
    skip: Expr | None = None
    limit: Expr | None = None
    where: Expr | None = None  # WITH … WHERE
    final: bool = False  # RETURN


@dataclass
class ProcedureCall:
    name: str
    args: list[Expr]
    yields: list[tuple[str, str]]  # (field, alias)
    where: Expr | None


@dataclass
class SubqueryCall:
    """`CALL { … }` (importing by a leading WITH) or `CALL (a, b) { … }`: `scope` None,
    or the variables named (`*`: all)."""

    query: Query
    scope: list[str] | None


Clause = Match | Unwind | Projection | ProcedureCall | SubqueryCall


@dataclass
class Query:
    parts: list[list[Clause]]  # one per UNION branch
    union_all: bool = False
