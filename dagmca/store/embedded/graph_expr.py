"""Expressions that read more than the row: label predicates (`n:A|B`), map projections
(`n {.a, .*}`), `reduce`, pattern comprehensions, and `COUNT`, `EXISTS` and `COLLECT`
subqueries, which match patterns or run whole queries through the engine (`GraphAccess`)
from the row they are evaluated in."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from typing import Any, Protocol

from dagmca.store.embedded import syntax as s
from dagmca.store.embedded.limits import Deadline
from dagmca.store.embedded.operators import CypherTypeError
from dagmca.store.embedded.values import Node, Rel

Row = dict[str, Any]
_Fn = Callable[[Row], Any]


class GraphAccess(Protocol):
    """What the engine lends the expressions."""

    def rows(self, patterns: list[s.PathPattern], where: s.Expr | None, row: Row) -> Iterator[Row]:
        """Every extension of `row` that the patterns and the WHERE accept."""
        ...

    def subquery(self, query: s.Query, row: Row, cap: int | None) -> tuple[list[str], list[Row]]:
        """The query's columns and rows, run from `row` (at most `cap` rows)."""
        ...


def truth(v: Any) -> bool | None:
    if v is None or isinstance(v, bool):
        return v
    raise CypherTypeError(f"expected a boolean, got {type(v).__name__}")


def has_labels(e: s.LabelExpr, labels: Collection[str]) -> bool:
    """Whether `labels` (a node's labels, or a relationship's type) fit the expression."""
    if e.op == "label":
        return e.name in labels
    if e.op == "and":
        return all(has_labels(p, labels) for p in e.parts)
    if e.op == "or":
        return any(has_labels(p, labels) for p in e.parts)
    if e.op == "not":
        return not has_labels(e.parts[0], labels)
    return bool(labels)  # %: any label at all


class GraphExpressions:
    """The compiler's methods for these expressions (mixed into `Compiler`)."""

    graph: GraphAccess
    deadline: Deadline

    def compile(self, e: s.Expr) -> _Fn:
        raise NotImplementedError  # the compiler's

    def _haslabels(self, e: s.HasLabels) -> _Fn:
        subject, wanted = self.compile(e.subject), e.labels

        def fits(row: Row) -> Any:
            v = subject(row)
            if v is None:
                return None
            if isinstance(v, Node):
                return has_labels(wanted, v.labels)
            if isinstance(v, Rel):
                return has_labels(wanted, (v.type,))
            raise CypherTypeError(f"a label predicate needs a node or a relationship, not {type(v).__name__}")

        return fits

    def _mapprojection(self, e: s.MapProjection) -> _Fn:
        subject = self.compile(e.subject)
        items = [(kind, key, self.compile(x) if x is not None else None) for kind, key, x in e.items]

        def project(row: Row) -> Any:
            v = subject(row)
            if v is None:
                return None
            if isinstance(v, Node | Rel):
                props = v.props
            elif isinstance(v, dict):
                props = v
            else:
                raise CypherTypeError(
                    f"a map projection needs a node, a relationship or a map, not {type(v).__name__}"
                )
            out: dict[str, Any] = {}
            for kind, key, fn in items:
                if kind == "all":
                    out.update(props)
                elif fn is None:
                    out[key] = props.get(key)
                else:
                    out[key] = fn(row)
            return out

        return project

    def _reduce(self, e: s.Reduce) -> _Fn:
        initial, source, body = self.compile(e.initial), self.compile(e.source), self.compile(e.body)
        acc_name, var = e.accumulator, e.var

        def reduce(row: Row) -> Any:
            acc, values = initial(row), source(row)
            if values is None:
                return None
            if not isinstance(values, list):
                raise CypherTypeError(f"reduce() iterates over a list, not {type(values).__name__}")
            tick = self.deadline.tick
            for v in values:
                tick()
                acc = body({**row, acc_name: acc, var: v})
            return acc

        return reduce

    def _patterncomprehension(self, e: s.PatternComprehension) -> _Fn:
        patterns, where, project, graph = [e.path], e.where, self.compile(e.project), self.graph
        return lambda row: [project(found) for found in graph.rows(patterns, where, row)]

    def _exists(self, e: s.Exists) -> _Fn:
        patterns, where, graph = e.patterns, e.where, self.graph
        return lambda row: next(graph.rows(patterns, where, row), None) is not None

    def _subquery(self, e: s.Subquery) -> _Fn:
        query, kind, graph = e.query, e.kind, self.graph
        if kind == "exists":
            return lambda row: bool(graph.subquery(query, row, 1)[1])
        if kind == "count":
            return lambda row: len(graph.subquery(query, row, None)[1])

        def collect(row: Row) -> Any:
            keys, rows = graph.subquery(query, row, None)
            if len(keys) != 1:
                raise CypherTypeError("COLLECT { … } returns one column")
            return [r[keys[0]] for r in rows]

        return collect
