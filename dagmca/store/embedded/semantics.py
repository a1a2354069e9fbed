"""The checks Neo4j makes before it runs a query, made here before a row is read: a
variable is one kind of thing (a node, a relationship, a path or a value) wherever it
is used, is defined where it is read, and a path variable is bound once; a pattern
used as a predicate introduces no variable; columns have one name each, a WITH names
what it projects, and ORDER BY aggregates only where the projection does."""

from __future__ import annotations

from typing import Any

from dagmca.store.embedded import syntax as s
from dagmca.store.embedded.syntax import CypherSyntaxError

Scope = dict[str, str]  # variable -> node, rel, path, or the kind of value it holds
_AGGREGATES = frozenset(
    {"count", "sum", "avg", "min", "max", "collect", "stdev", "stdevp", "percentilecont", "percentiledisc"}
)
_GRAPH_KINDS = {"node": "a node", "rel": "a relationship", "path": "a path"}


class SemanticError(CypherSyntaxError):
    """A query Neo4j refuses before it runs it."""


def check(query: s.Query, scope: Scope | None = None) -> None:
    for part in query.parts:
        _Part(dict(scope or {})).clauses(part)


def _literal_kind(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int | float | str):
        return type(v).__name__
    return "any"


class _Part:
    def __init__(self, scope: Scope) -> None:
        self.scope = scope

    def clauses(self, clauses: list[s.Clause]) -> None:
        for clause in clauses:
            if isinstance(clause, s.Match):
                self.match(clause)
            elif isinstance(clause, s.Unwind):
                self.refs(clause.expr)
                self.scope[clause.alias] = "any"
            elif isinstance(clause, s.ProcedureCall):
                for arg in clause.args:
                    self.refs(arg)
                self.scope.update({alias: "any" for _, alias in clause.yields})
            elif isinstance(clause, s.SubqueryCall):
                check(clause.query, dict(self.scope))
                for part in clause.query.parts:
                    last = part[-1]
                    if isinstance(last, s.Projection):
                        self.scope.update({i.alias: "any" for i in last.items})
            else:
                self.projection(clause)

    # -- MATCH ---------------------------------------------------------------------------
    def declare(self, var: str | None, kind: str, *, variable: bool = False) -> None:
        """`var` bound to a node, a relationship or a path (`variable`: a list of
        relationships, which a list may give)."""
        if var is None:
            return
        had = self.scope.get(var)
        if had is not None and had not in (kind, "any") and not (variable and had == "list"):
            was = _GRAPH_KINDS.get(had, f"a value ({had})")
            raise SemanticError(
                f"cannot read the query: variable `{var}` is {was}, and cannot be {_GRAPH_KINDS[kind]} too"
            )
        self.scope[var] = kind

    def match(self, m: s.Match) -> None:
        for p in m.patterns:
            if p.var is not None and p.var in self.scope:
                raise SemanticError(f"cannot read the query: variable `{p.var}` is already bound")
            rels_here: set[str] = set()
            for n in p.nodes:
                self.declare(n.var, "node")
            for r in p.rels:
                if r.var is not None and r.var in rels_here:
                    raise SemanticError(
                        f"cannot read the query: relationship variable `{r.var}` is used for more than one "
                        "relationship"
                    )
                self.declare(r.var, "rel", variable=r.variable_length)
                if r.var:
                    rels_here.add(r.var)
            if p.var is not None:
                if p.var in self.scope:  # a node or a relationship of its own pattern
                    raise SemanticError(f"cannot read the query: variable `{p.var}` is already bound")
                self.scope[p.var] = "path"
        if m.where is not None:
            self.predicate(m.where)

    def predicate(self, e: s.Expr) -> None:
        if isinstance(e, s.Var) and self.scope.get(e.name) in _GRAPH_KINDS:
            raise SemanticError(
                f"cannot read the query: {_GRAPH_KINDS[self.scope[e.name]]} is not a predicate"
            )
        self.refs(e)

    # -- WITH and RETURN -----------------------------------------------------------------
    def projection(self, p: s.Projection) -> None:
        visible = [v for v in self.scope if not v.startswith("\x00")]
        if p.star and not visible and not p.items:
            raise SemanticError("cannot read the query: RETURN * (or WITH *) has no variables to project")
        aliases = [i.alias for i in p.items]
        twice = {a for a in aliases if aliases.count(a) > 1}
        if twice:
            raise SemanticError(f"cannot read the query: more than one column is named `{sorted(twice)[0]}`")
        aggregating = False
        for item in p.items:
            if not p.final and not item.aliased:
                raise SemanticError(f"cannot read the query: WITH must name `{item.expr.text}` with AS")
            if isinstance(item.expr, s.Exists) and item.expr.bare:
                raise SemanticError(
                    "cannot read the query: a pattern is a predicate only in WHERE "
                    "(use EXISTS { … } or COUNT { … })"
                )
            self.refs(item.expr)
            aggregating = aggregating or _aggregates(item.expr)
        projected = {i.alias: self.kind(i.expr) for i in p.items}
        for e, _ in p.order:
            if _aggregates(e) and not aggregating:
                raise SemanticError(
                    "cannot read the query: ORDER BY aggregates only where its WITH or RETURN aggregates"
                )
            free = self.free(e, set())
            if p.distinct or aggregating:
                # only what is projected: an alias, or an expression the projection has
                free = self.unprojected(e, [i.expr for i in p.items])
                if not free <= set(projected):
                    raise SemanticError(
                        f"cannot read the query: ORDER BY after DISTINCT or an aggregation reads only what "
                        f"is projected, not `{e.text or sorted(free - set(projected))[0]}`"
                    )
            self.undefined(free - set(projected))
        new = {**(self.scope if p.star else {}), **projected}
        if p.where is not None:
            self.scope = {**self.scope, **new}
            self.predicate(p.where)
        self.scope = new

    def unprojected(self, e: s.Expr, items: list[s.Expr]) -> set[str]:
        """The variables `e` reads outside the expressions `items` projects and outside
        aggregates (which ORDER BY may repeat)."""
        if any(e == x for x in items) or (isinstance(e, s.Call) and e.name in _AGGREGATES):
            return set()
        if isinstance(e, s.Var):
            return {e.name}
        if isinstance(
            e, s.Binary | s.Unary | s.Prop | s.Index | s.Call | s.ListExpr | s.Case | s.TypePredicate
        ):
            found: set[str] = set()
            for child in _children(e):
                found |= self.unprojected(child, items)
            return found
        return self.free(e, set())

    def kind(self, e: s.Expr) -> str:
        if isinstance(e, s.Var):
            return self.scope.get(e.name, "any")
        if isinstance(e, s.Literal):
            return _literal_kind(e.value)
        if isinstance(e, s.ListExpr | s.Comprehension):
            return "list"
        if isinstance(e, s.MapExpr | s.MapProjection):
            return "map"
        return "any"

    # -- variables read --------------------------------------------------------------------
    def refs(self, e: s.Expr) -> None:
        self.undefined(self.free(e, set()))

    def undefined(self, names: set[str]) -> None:
        missing = sorted(n for n in names if n not in self.scope)
        if missing:
            raise SemanticError(f"cannot read the query: variable `{missing[0]}` is not defined")

    def free(self, e: s.Expr | None, local: set[str]) -> set[str]:
        """The variables `e` reads from outside it (`local`: those bound inside around it)."""
        if e is None or isinstance(e, s.Literal | s.Param):
            return set()
        if isinstance(e, s.Var):
            return set() if e.name in local else {e.name}
        if isinstance(e, s.Comprehension):
            inner = local | {e.var}
            return self.free(e.source, local) | self.free(e.where, inner) | self.free(e.project, inner)
        if isinstance(e, s.Reduce):
            inner = local | {e.accumulator, e.var}
            return self.free(e.initial, local) | self.free(e.source, local) | self.free(e.body, inner)
        if isinstance(e, s.PatternComprehension | s.Exists):
            patterns = [e.path] if isinstance(e, s.PatternComprehension) else e.patterns
            names = _pattern_vars(patterns)
            if isinstance(e, s.Exists) and e.bare:
                new = sorted(n for n in names if n not in self.scope and n not in local)
                if new:
                    raise SemanticError(
                        f"cannot read the query: a pattern used as a predicate cannot introduce the variable "
                        f"`{new[0]}` (use EXISTS {{ … }})"
                    )
            inner = local | names
            project = e.project if isinstance(e, s.PatternComprehension) else None
            return self.free(e.where, inner) | self.free(project, inner)
        if isinstance(e, s.Subquery):
            check(e.query, {**self.scope, **dict.fromkeys(local, "any")})
            return set()
        if (
            isinstance(e, s.Call)
            and e.name == "size"
            and any(isinstance(a, s.Exists) and a.bare for a in e.args)
        ):
            raise SemanticError("cannot read the query: size() of a pattern: use COUNT { … }")
        found: set[str] = set()
        for child in _children(e):
            found |= self.free(child, local)
        return found


def _children(e: s.Expr) -> list[s.Expr]:
    if isinstance(e, s.Case):
        out = [x for pair in e.whens for x in pair]
        return [x for x in (e.subject, *out, e.default) if x is not None]
    if isinstance(e, s.MapProjection):
        return [e.subject, *(x for _, _, x in e.items if x is not None)]
    if isinstance(e, s.MapExpr):
        return list(e.items.values())
    if isinstance(e, s.ListExpr):
        return list(e.items)
    if isinstance(e, s.Call):
        return list(e.args)
    found = [
        getattr(e, name, None) for name in ("subject", "operand", "left", "right", "index", "start", "stop")
    ]
    return [x for x in found if isinstance(x, s.Expr)]


def _pattern_vars(patterns: list[s.PathPattern]) -> set[str]:
    names = {p.var for p in patterns} | {n.var for p in patterns for n in p.nodes}
    names |= {r.var for p in patterns for r in p.rels}
    return {n for n in names if n}


def _aggregates(e: s.Expr | None) -> bool:
    """Whether `e` holds an aggregate (not inside a subquery, which aggregates its own)."""
    if e is None or isinstance(e, s.Subquery):
        return False
    if isinstance(e, s.Call) and e.name in _AGGREGATES:
        return True
    if isinstance(e, s.Comprehension):
        return any(_aggregates(x) for x in (e.source, e.where, e.project))
    if isinstance(e, s.Reduce):
        return any(_aggregates(x) for x in (e.initial, e.source, e.body))
    return any(_aggregates(x) for x in _children(e))
