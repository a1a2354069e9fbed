"""Expressions compiled once per query into Python closures over a row (a dict of the
variables in scope), with Cypher's three-valued logic."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dagmca.errors import UserError
from dagmca.store.embedded import syntax as s
from dagmca.store.embedded.functions import AGGREGATES, SCALARS, call_scalar
from dagmca.store.embedded.graph_expr import GraphAccess, GraphExpressions, Row, truth
from dagmca.store.embedded.limits import NO_LIMIT, Deadline
from dagmca.store.embedded.operators import ARITHMETIC, COMPARISONS, CypherTypeError
from dagmca.store.embedded.syntax import Unsupported
from dagmca.store.embedded.temporal import TEMPORAL, Duration, Temporal, component, statement_now
from dagmca.store.embedded.types import is_of
from dagmca.store.embedded.values import Node, Rel, equals

Fn = Callable[[Row], Any]

__all__ = ["Aggregate", "Compiler", "Fn", "GraphAccess", "Row", "truth"]


@dataclass
class Aggregate:
    """An aggregate call met in a projection: computed per group, then read by the
    projection's expressions from the row under `slot`."""

    slot: str
    name: str
    arg: Fn | None
    distinct: bool
    extra: Fn | None = None  # a second argument (the percentile), read once per group


def _and(a: bool | None, b: bool | None) -> bool | None:
    return False if a is False or b is False else None if a is None or b is None else True


def _or(a: bool | None, b: bool | None) -> bool | None:
    return True if a is True or b is True else None if a is None or b is None else False


class Compiler(GraphExpressions):
    def __init__(self, params: dict[str, Any], graph: GraphAccess, deadline: Deadline = NO_LIMIT) -> None:
        self.params = params
        self.graph = graph
        self.deadline = deadline
        self.aggregates: list[Aggregate] | None = None  # a list while compiling a projection
        self.now = statement_now()  # the statement's clock: every datetime() in it reads the same

    def compile(self, e: s.Expr) -> Fn:
        method = getattr(self, f"_{type(e).__name__.lower()}")
        fn: Fn = method(e)
        return fn

    def _literal(self, e: s.Literal) -> Fn:
        value = e.value
        return lambda row: value

    def _param(self, e: s.Param) -> Fn:
        if e.name not in self.params:
            raise UserError(f"the query uses ${e.name}, and no --param {e.name}=… was given")
        value = self.params[e.name]
        return lambda row: value

    def _var(self, e: s.Var) -> Fn:
        name = e.name

        def var(row: Row) -> Any:
            try:
                return row[name]
            except KeyError:
                raise UserError(f"variable {name!r} is not defined at this point of the query") from None

        return var

    def _prop(self, e: s.Prop) -> Fn:
        subject, key = self.compile(e.subject), e.key

        def prop(row: Row) -> Any:
            v = subject(row)
            if isinstance(v, Node | Rel):
                return v.props.get(key)
            if isinstance(v, dict):
                return v.get(key)
            if v is None:
                return None
            if isinstance(v, Temporal | Duration):
                try:
                    return component(v, key)
                except KeyError:
                    raise CypherTypeError(f"a {v.type_name} has no component {key!r}") from None
            raise CypherTypeError(f"cannot read property {key!r} of a {type(v).__name__}")

        return prop

    def _index(self, e: s.Index) -> Fn:
        subject, index = self.compile(e.subject), self.compile(e.index)

        def at(row: Row) -> Any:
            v, i = subject(row), index(row)
            if v is None or i is None:
                return None
            if isinstance(v, list) and isinstance(i, int) and not isinstance(i, bool):
                return v[i] if -len(v) <= i < len(v) else None
            if isinstance(v, dict | Node | Rel) and isinstance(i, str):
                return (v.props if isinstance(v, Node | Rel) else v).get(i)
            raise CypherTypeError(f"cannot index a {type(v).__name__} with a {type(i).__name__}")

        return at

    def _slice(self, e: s.Slice) -> Fn:
        subject = self.compile(e.subject)
        start = self.compile(e.start) if e.start is not None else None
        stop = self.compile(e.stop) if e.stop is not None else None

        def sliced(row: Row) -> Any:
            v = subject(row)
            a = start(row) if start else 0
            b = stop(row) if stop else None
            if v is None or a is None or (stop and b is None):
                return None
            if not isinstance(v, list):
                raise CypherTypeError(f"cannot slice a {type(v).__name__}")
            return v[a:b]

        return sliced

    def _listexpr(self, e: s.ListExpr) -> Fn:
        items = [self.compile(x) for x in e.items]
        return lambda row: [f(row) for f in items]

    def _mapexpr(self, e: s.MapExpr) -> Fn:
        items = {k: self.compile(x) for k, x in e.items.items()}
        return lambda row: {k: f(row) for k, f in items.items()}

    def _unary(self, e: s.Unary) -> Fn:
        operand = self.compile(e.operand)
        if e.op == "not":

            def not_(row: Row) -> Any:
                v = truth(operand(row))
                return None if v is None else not v

            return not_
        if e.op == "is null":
            return lambda row: operand(row) is None
        if e.op == "is not null":
            return lambda row: operand(row) is not None
        if e.op == "-":
            return lambda row: ARITHMETIC["-"](0, v) if (v := operand(row)) is not None else None
        return operand

    def _typepredicate(self, e: s.TypePredicate) -> Fn:
        subject, wanted, negated = self.compile(e.subject), e.type, e.negated
        return lambda row: is_of(subject(row), wanted) != negated

    def _binary(self, e: s.Binary) -> Fn:
        left, right = self.compile(e.left), self.compile(e.right)
        if e.op in ("and", "or", "xor"):
            return self._logical(e.op, left, right)
        op = ARITHMETIC.get(e.op) or COMPARISONS[e.op]
        return lambda row: op(left(row), right(row))

    @staticmethod
    def _logical(op: str, left: Fn, right: Fn) -> Fn:
        if op == "and":

            def and_(row: Row) -> Any:
                a = truth(left(row))
                return False if a is False else _and(a, truth(right(row)))

            return and_
        if op == "or":

            def or_(row: Row) -> Any:
                a = truth(left(row))
                return True if a is True else _or(a, truth(right(row)))

            return or_

        def xor(row: Row) -> Any:
            a, b = truth(left(row)), truth(right(row))
            return None if a is None or b is None else a != b

        return xor

    def _call(self, e: s.Call) -> Fn:
        if e.name in AGGREGATES:
            return self._aggregate(e)
        if e.name in ("all", "any", "none", "single"):
            return self._list_predicate(e)
        if e.name in TEMPORAL:
            temporal_fn, now = TEMPORAL[e.name], self.now
            temporal_args = [self.compile(a) for a in e.args]
            return lambda row: temporal_fn(now, *[a(row) for a in temporal_args])
        if e.name not in SCALARS:  # refused before any row is read, whether or not one is
            raise Unsupported(f"the function {e.written or e.name}() is not supported on the embedded store")
        args = [self.compile(a) for a in e.args]
        name = e.name
        return lambda row: call_scalar(name, [a(row) for a in args])

    def _aggregate(self, e: s.Call) -> Fn:
        if self.aggregates is None:
            raise UserError(f"{e.written or e.name}() aggregates, and can only be used in WITH or RETURN")
        outer, self.aggregates = self.aggregates, None  # no aggregate inside an aggregate
        try:
            arg = None if e.star else self.compile(e.args[0]) if e.args else None
            extra = self.compile(e.args[1]) if len(e.args) > 1 else None
        finally:
            self.aggregates = outer
        if arg is None and not e.star:
            raise UserError(f"{e.written or e.name}() needs an argument")
        if e.name.startswith("percentile") and (extra is None or len(e.args) != 2):
            name = e.written or e.name
            raise UserError(f"{name}() takes a value and a percentile: {name}(x, 0.5)")
        slot = f"\x00agg{len(outer)}"
        outer.append(Aggregate(slot, e.name, arg, e.distinct, extra))
        return lambda row: row[slot]

    def _list_predicate(self, e: s.Call) -> Fn:
        if len(e.args) != 1 or not isinstance(e.args[0], s.Comprehension) or e.args[0].where is None:
            raise UserError(f"{e.name}() is written {e.name}(x IN list WHERE predicate)")
        c = e.args[0]
        source, where, var, kind = self.compile(c.source), self.compile(c.where), c.var, e.name  # type: ignore[arg-type]

        def predicate(row: Row) -> Any:
            values = source(row)
            if values is None:
                return None
            results = [truth(where({**row, var: v})) for v in values]
            hits, unknown = results.count(True), None in results
            if kind == "all":
                return False if False in results else None if unknown else True
            if kind == "any":
                return True if hits else None if unknown else False
            if kind == "none":
                return False if hits else None if unknown else True
            return False if hits > 1 else None if unknown else hits == 1

        return predicate

    def _case(self, e: s.Case) -> Fn:
        subject = self.compile(e.subject) if e.subject is not None else None
        whens = [(self.compile(w), self.compile(t)) for w, t in e.whens]
        default = self.compile(e.default) if e.default is not None else (lambda row: None)

        def case(row: Row) -> Any:
            value = subject(row) if subject else None
            for when, then in whens:
                hit = equals(value, when(row)) if subject else truth(when(row))
                if hit:
                    return then(row)
            return default(row)

        return case

    def _comprehension(self, e: s.Comprehension) -> Fn:
        source, var = self.compile(e.source), e.var
        where = self.compile(e.where) if e.where is not None else None
        project = self.compile(e.project) if e.project is not None else None

        def comprehension(row: Row) -> Any:
            values = source(row)
            if values is None:
                return None
            if not isinstance(values, list):
                raise CypherTypeError(f"cannot iterate over a {type(values).__name__}")
            out = []
            tick = self.deadline.tick
            for v in values:
                tick()
                inner = {**row, var: v}
                if where is None or truth(where(inner)):
                    out.append(project(inner) if project else v)
            return out

        return comprehension
