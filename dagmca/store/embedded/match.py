"""Pattern matching: every way a MATCH pattern fits the graph, given the variables a
row has bound already. Each pattern starts at its most selective node (bound, by id,
by an indexed property, by label) and grows from there both ways; within one MATCH no
relationship is used twice, as in Neo4j."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from dagmca.store.embedded import syntax as s
from dagmca.store.embedded.expression_compiler import Compiler, Fn, Row, truth
from dagmca.store.embedded.graph_expr import has_labels
from dagmca.store.embedded.limits import NO_LIMIT, Deadline
from dagmca.store.embedded.paths import Selector, select
from dagmca.store.embedded.values import Graph, Node, Path, Rel, equals


@dataclass
class _NodeSpec:
    var: str | None
    labels: tuple[str, ...]
    props: list[tuple[str, Fn]]
    label_expr: s.LabelExpr | None = None  # beyond a conjunction: `A|B`, `!A`, `%`


@dataclass
class _RelSpec:
    var: str | None
    types: frozenset[str]
    direction: str
    props: list[tuple[str, Fn]]
    min_hops: int
    max_hops: int | None
    variable: bool
    type_expr: s.LabelExpr | None = None


@dataclass
class _PathSpec:
    var: str | None
    nodes: list[_NodeSpec]
    rels: list[_RelSpec]
    selector: Selector | None = None


Bound = dict[str, Any]
Values = dict[str, Any]  # pattern property values, evaluated once per row


class Matcher:
    def __init__(self, graph: Graph, compiler: Compiler, deadline: Deadline = NO_LIMIT) -> None:
        self.graph = graph
        self.compiler = compiler
        self.deadline = deadline
        self._compiled: dict[int, tuple[list[_PathSpec], Fn | None]] = {}

    def compile(
        self, patterns: list[s.PathPattern], where: s.Expr | None
    ) -> tuple[list[_PathSpec], Fn | None]:
        key = id(patterns)
        if key not in self._compiled:
            specs = [self._path(p) for p in patterns]
            self._compiled[key] = (specs, self.compiler.compile(where) if where is not None else None)
        return self._compiled[key]

    def _props(self, props: dict[str, s.Expr]) -> list[tuple[str, Fn]]:
        return [(k, self.compiler.compile(v)) for k, v in props.items()]

    def _path(self, p: s.PathPattern) -> _PathSpec:
        nodes = [_NodeSpec(n.var, tuple(n.labels), self._props(n.props), n.label_expr) for n in p.nodes]
        rels = [
            _RelSpec(
                r.var,
                frozenset(r.types),
                r.direction,
                self._props(r.props),
                r.min_hops,
                r.max_hops,
                r.variable_length,
                r.type_expr,
            )
            for r in p.rels
        ]
        return _PathSpec(p.var, nodes, rels, Selector(*p.selector) if p.selector else None)

    def new_variables(self, patterns: list[s.PathPattern]) -> list[str]:
        names = [p.var for p in patterns] + [n.var for p in patterns for n in p.nodes]
        names += [r.var for p in patterns for r in p.rels]
        return [n for n in dict.fromkeys(names) if n]

    def rows(self, patterns: list[s.PathPattern], where: s.Expr | None, row: Row) -> Iterator[Row]:
        """Every extension of `row` that the patterns and the WHERE accept."""
        specs, test = self.compile(patterns, where)
        for found in self._all(specs, 0, dict(row), frozenset()):
            if test is None or truth(test(found)) is True:
                yield found

    def _all(self, specs: list[_PathSpec], i: int, row: Bound, used: frozenset[int]) -> Iterator[Bound]:
        self.deadline.tick()
        if i == len(specs):
            yield row
            return
        for found, now_used in self._path_matches(specs[i], row, used):
            yield from self._all(specs, i + 1, found, now_used)

    # -- one path pattern ------------------------------------------------------------
    def _path_matches(
        self, p: _PathSpec, row: Bound, used: frozenset[int]
    ) -> Iterator[tuple[Bound, frozenset[int]]]:
        node_values = [{k: f(row) for k, f in n.props} for n in p.nodes]
        rel_values = [{k: f(row) for k, f in r.props} for r in p.rels]
        if p.selector is not None:
            yield from self._selected(p, node_values, rel_values[0], row, used)
            return
        pools = [self._pool(n, v, row) for n, v in zip(p.nodes, node_values, strict=True)]
        anchor = min(range(len(pools)), key=lambda i: len(pools[i]))
        spec, values = p.nodes[anchor], node_values[anchor]
        for start in (n for n in pools[anchor] if self._node_ok(spec, values, n)):
            self.deadline.tick()
            bound = dict(row)
            if not self._bind_node(p.nodes[anchor], start, bound):
                continue
            for right in self._grow(p, node_values, rel_values, anchor, 1, start, bound, used):
                r_bound, r_used, r_nodes, r_rels = right
                for left in self._grow(p, node_values, rel_values, anchor, -1, start, r_bound, r_used):
                    l_bound, l_used, l_nodes, l_rels = left
                    if p.var:
                        nodes = (*reversed(l_nodes), start, *r_nodes)
                        rels = (*reversed(l_rels), *r_rels)
                        l_bound = {**l_bound, p.var: Path(tuple(nodes), tuple(rels))}
                    yield l_bound, l_used

    def _selected(
        self, p: _PathSpec, node_values: list[Values], values: Values, row: Bound, used: frozenset[int]
    ) -> Iterator[tuple[Bound, frozenset[int]]]:
        """The paths a shortest-path selector keeps, searched from the side with fewer
        candidate nodes."""
        assert p.selector is not None
        ends = [
            [n for n in self._pool(spec, v, row) if self._node_ok(spec, v, n)]
            for spec, v in zip(p.nodes, node_values, strict=True)
        ]
        rel = p.rels[0]
        back = len(ends[1]) < len(ends[0])
        starts, finish = (ends[1], ends[0]) if back else (ends[0], ends[1])
        direction = {"out": "in", "in": "out"}.get(rel.direction, "both") if back else rel.direction
        wanted = {n.key for n in finish}
        targets = frozenset(wanted) if len(wanted) <= 16 else None

        def steps(node: Node, walked: frozenset[int]) -> Iterator[tuple[Rel, Node]]:
            return self._steps(node, rel, values, direction, used | walked)

        hops = (rel.min_hops, rel.max_hops) if rel.variable else (1, 1)
        for start in starts:
            found = select(p.selector, start, steps, hops, lambda n: n.key in wanted, self.deadline, targets)
            for nodes, rels in found:
                if back:
                    nodes, rels = nodes[::-1], rels[::-1]
                bound = dict(row)
                if not (
                    self._bind_node(p.nodes[0], nodes[0], bound)
                    and self._bind_node(p.nodes[1], nodes[-1], bound)
                ):
                    continue
                if rel.var:
                    value: Any = list(rels) if rel.variable else rels[0]
                    if rel.var in bound and not _same(bound[rel.var], value):
                        continue
                    bound[rel.var] = value
                if p.var:
                    bound[p.var] = Path(nodes, rels)
                yield bound, used | {r.key for r in rels}

    def _pool(self, spec: _NodeSpec, values: Values, row: Bound) -> list[Node]:
        """The nodes a node pattern may match, from the narrowest index at hand (not yet
        filtered: only the anchor's pool is)."""
        if spec.var and spec.var in row:
            value = row[spec.var]
            return [value] if isinstance(value, Node) else []
        label = spec.labels[0] if spec.labels else None
        keyed = [(k, v) for k, v in values.items() if v is not None and not isinstance(v, list | dict)]
        if any(v is None for v in values.values()):
            return []  # {key: null} matches nothing
        if "id" in values and isinstance(values["id"], str):
            pool = self.graph.lookup(label, "id", values["id"])
        elif keyed:
            pool = min((self.graph.lookup(label, k, v) for k, v in keyed), key=len)
        elif spec.labels:
            pool = min((self.graph.by_label.get(x, []) for x in spec.labels), key=len)
        elif spec.label_expr is not None and spec.label_expr.op == "or":
            pool = self._either(spec.label_expr)
        else:
            pool = self.graph.nodes
        return pool

    def _either(self, e: s.LabelExpr) -> list[Node]:
        """The nodes that have any of the labels of `A|B|…` (all of them when a part is
        more than a label)."""
        names = [p.name for p in e.parts if p.op == "label"]
        if len(names) < len(e.parts):
            return self.graph.nodes
        found = {id(n): n for x in names for n in self.graph.by_label.get(x, [])}
        return sorted(found.values(), key=lambda n: n.key)

    @staticmethod
    def _node_ok(spec: _NodeSpec, values: Values, node: Node) -> bool:
        return (
            all(x in node.labels for x in spec.labels)
            and (spec.label_expr is None or has_labels(spec.label_expr, node.labels))
            and all(equals(node.props.get(k), v) is True for k, v in values.items())
        )

    @staticmethod
    def _bind_node(spec: _NodeSpec, node: Node, bound: Bound) -> bool:
        if spec.var is None:
            return True
        if spec.var in bound:
            return bound[spec.var] is node
        bound[spec.var] = node
        return True

    def _grow(
        self,
        p: _PathSpec,
        node_values: list[Values],
        rel_values: list[Values],
        at: int,
        step: int,
        node: Node,
        bound: Bound,
        used: frozenset[int],
    ) -> Iterator[tuple[Bound, frozenset[int], list[Node], list[Rel]]]:
        """Extend from node pattern `at` one hop at a time in direction `step` to the
        pattern's end; yields the bindings, the used relationships and the nodes and
        relationships walked (in walking order)."""
        nxt = at + step
        if nxt < 0 or nxt >= len(p.nodes):
            yield bound, used, [], []
            return
        rel_at = at if step > 0 else at - 1
        spec, values = p.rels[rel_at], rel_values[rel_at]
        direction = spec.direction if step > 0 else {"out": "in", "in": "out"}.get(spec.direction, "both")
        target_spec, target_values = p.nodes[nxt], node_values[nxt]
        for rels, hops_nodes in self._hops(node, spec, values, direction, used):
            self.deadline.tick()
            end = hops_nodes[-1] if hops_nodes else node
            if not self._node_ok(target_spec, target_values, end):
                continue
            b = dict(bound)
            if not self._bind_node(target_spec, end, b):
                continue
            if spec.var:
                value: Any = rels if spec.variable else rels[0]
                if spec.var in b and not _same(b[spec.var], value):
                    continue
                b[spec.var] = value
            now_used = used | {r.key for r in rels}
            for rest in self._grow(p, node_values, rel_values, nxt, step, end, b, now_used):
                yield rest[0], rest[1], [*hops_nodes, *rest[2]], [*rels, *rest[3]]

    def _hops(
        self, node: Node, spec: _RelSpec, values: Values, direction: str, used: frozenset[int]
    ) -> Iterator[tuple[list[Rel], list[Node]]]:
        """Each walk from `node` the relationship pattern allows: (relationships, nodes
        reached after each), shortest first along each branch."""
        if not spec.variable:
            for rel, other in self._steps(node, spec, values, direction, used):
                yield [rel], [other]
            return
        limit = spec.max_hops

        def walk(
            at: Node, rels: list[Rel], nodes: list[Node], seen: frozenset[int]
        ) -> Iterator[tuple[list[Rel], list[Node]]]:
            if len(rels) >= spec.min_hops:
                yield rels, nodes
            if limit is not None and len(rels) >= limit:
                return
            for rel, other in self._steps(at, spec, values, direction, seen):
                yield from walk(other, [*rels, rel], [*nodes, other], seen | {rel.key})

        yield from walk(node, [], [], used)

    @staticmethod
    def _steps(
        node: Node, spec: _RelSpec, values: Values, direction: str, used: frozenset[int]
    ) -> Iterator[tuple[Rel, Node]]:
        if direction in ("out", "both"):
            for rel in node.out:
                if rel.key not in used and _rel_ok(spec, values, rel):
                    yield rel, rel.end
        if direction in ("in", "both"):
            for rel in node.inc:
                if (
                    rel.key not in used
                    and _rel_ok(spec, values, rel)
                    and not (direction == "both" and rel.start is rel.end)
                ):
                    yield rel, rel.start


def _rel_ok(spec: _RelSpec, values: Values, rel: Rel) -> bool:
    return (
        (not spec.types or rel.type in spec.types)
        and (spec.type_expr is None or has_labels(spec.type_expr, (rel.type,)))
        and all(equals(rel.props.get(k), v) is True for k, v in values.items())
    )


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
    return a is b
