"""Running a parsed query clause by clause over rows of bound variables: MATCH and
OPTIONAL MATCH, UNWIND, WITH and RETURN (grouping, aggregates, DISTINCT, ORDER BY,
SKIP, LIMIT), UNION, CALL { } subqueries (and the COUNT, EXISTS and COLLECT ones inside
expressions), and the few procedures a store without a server can answer."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable, Iterator
from typing import Any

from dagmca.errors import UserError
from dagmca.store import statements
from dagmca.store.embedded import syntax as s
from dagmca.store.embedded.aggregates import aggregate
from dagmca.store.embedded.expression_compiler import Aggregate, Compiler, Fn, Row, truth
from dagmca.store.embedded.limits import NO_LIMIT, Deadline
from dagmca.store.embedded.match import Matcher
from dagmca.store.embedded.parser import parse
from dagmca.store.embedded.syntax import Unsupported
from dagmca.store.embedded.values import Graph, SortKey, hashable, output

Result = tuple[list[str], list[dict[str, Any]]]


def run(
    graph: Graph,
    text: str,
    params: dict[str, Any],
    *,
    deadline: Deadline = NO_LIMIT,
    max_rows: int | None = None,
) -> Result:
    """The query's column names and its rows, as JSON-ready values: stopped with
    `QueryTimeout` past `deadline`; with `max_rows`, at most one row more than that
    (how the caller tells that rows were left out)."""
    query = parse(text)
    deadline.check()
    cap = max_rows + 1 if max_rows is not None and len(query.parts) == 1 else None
    engine = Engine(graph, params, deadline)
    keys, rows = _union(query, [engine.run_part(part, cap) for part in query.parts])
    if max_rows is not None:
        rows = rows[: max_rows + 1]
    return keys, [{k: output(r[k]) for k in keys} for r in rows]


def _union(query: s.Query, results: list[tuple[list[str], list[Row]]]) -> tuple[list[str], list[Row]]:
    """The rows of a query's parts, one after the other; without ALL, each once."""
    keys, rows = results[0]
    for other_keys, other_rows in results[1:]:
        if other_keys != keys:
            raise UserError("the parts of a UNION must return the same columns")
        rows += other_rows
    if len(results) > 1 and not query.union_all:
        seen: set[Any] = set()
        unique = []
        for r in rows:
            key = hashable([r[k] for k in keys])
            if key not in seen:
                seen.add(key)
                unique.append(r)
        rows = unique
    return keys, rows


def _imports(query: s.Query) -> bool:
    """Whether a `CALL { … }` begins by importing variables (`WITH a, b`) in each part."""
    return all(
        part
        and isinstance(part[0], s.Projection)
        and not part[0].final
        and all(isinstance(i.expr, s.Var) and i.expr.name == i.alias for i in part[0].items)
        for part in query.parts
    )


class Engine:
    """Runs the clauses; lends the expressions pattern matching and subqueries."""

    def __init__(self, graph: Graph, params: dict[str, Any], deadline: Deadline = NO_LIMIT) -> None:
        self.graph = graph
        self.deadline = deadline
        self.compiler = Compiler(params, self, deadline)
        self.matcher = Matcher(graph, self.compiler, deadline)

    def rows(self, patterns: list[s.PathPattern], where: s.Expr | None, row: Row) -> Iterator[Row]:
        return self.matcher.rows(patterns, where, row)

    def subquery(self, query: s.Query, row: Row, cap: int | None) -> tuple[list[str], list[Row]]:
        one = len(query.parts) == 1
        return _union(query, [self.run_part(p, cap if one else None, [dict(row)]) for p in query.parts])

    def run_part(
        self, clauses: list[s.Clause], cap: int | None = None, start: list[Row] | None = None
    ) -> tuple[list[str], list[Row]]:
        """The part's columns and rows, from the rows `start` (one empty row); with
        `cap`, at most that many: the final RETURN stops there when nothing needs the
        rest (no ORDER BY, no DISTINCT)."""
        rows: Iterable[Row] = start if start is not None else [{}]
        keys: list[str] = []
        for i, clause in enumerate(clauses):
            if isinstance(clause, s.Match):
                rows = self._match(clause, rows)
            elif isinstance(clause, s.Unwind):
                rows = self._unwind(clause, rows)
            elif isinstance(clause, s.ProcedureCall):
                keys, rows = self._call(clause, rows)
            elif isinstance(clause, s.SubqueryCall):
                rows = self._subquery_call(clause, rows)
            else:
                keys, rows = self._project(clause, rows, cap if i == len(clauses) - 1 else None)
        return keys, list(itertools.islice(rows, cap))

    def _subquery_call(self, c: s.SubqueryCall, rows: Iterable[Row]) -> Iterator[Row]:
        """Each row, extended by each row the subquery returns from it (none: the row goes)."""
        importing = c.scope is None and _imports(c.query)
        for row in rows:
            if c.scope is None:
                start = dict(row) if importing else {}
            elif "*" in c.scope:
                start = dict(row)
            else:
                missing = [v for v in c.scope if v not in row]
                if missing:
                    raise UserError(f"variable {missing[0]!r} is not defined at this point of the query")
                start = {v: row[v] for v in c.scope}
            keys, found = self.subquery(c.query, start, None)
            for r in found:
                self.deadline.tick()
                yield {**row, **{k: r[k] for k in keys}}

    def _match(self, m: s.Match, rows: Iterable[Row]) -> Iterator[Row]:
        fresh = self.matcher.new_variables(m.patterns)
        for row in rows:
            self.deadline.tick()
            found = False
            for extended in self.matcher.rows(m.patterns, m.where, row):
                found = True
                yield extended
            if m.optional and not found:
                yield {**row, **{v: None for v in fresh if v not in row}}

    def _unwind(self, u: s.Unwind, rows: Iterable[Row]) -> Iterator[Row]:
        source = self.compiler.compile(u.expr)
        for row in rows:
            values = source(row)
            if values is None:
                continue
            for v in values if isinstance(values, list) else [values]:
                self.deadline.tick()
                yield {**row, u.alias: v}

    # -- WITH and RETURN -------------------------------------------------------------
    def _project(self, p: s.Projection, rows: Iterable[Row], cap: int | None) -> tuple[list[str], list[Row]]:
        items = list(p.items)
        if p.star:
            rows = list(rows)
            names = sorted(k for k in (rows[0] if rows else {}) if not k.startswith("\x00"))
            items = [s.Item(s.Var(n), n) for n in names] + items
        aggregates: list[Aggregate] = []
        self.compiler.aggregates = aggregates
        try:
            compiled = []
            for item in items:
                before = len(aggregates)
                compiled.append((item.alias, self.compiler.compile(item.expr), len(aggregates) > before))
            order = [(self.compiler.compile(e), desc) for e, desc in p.order]
        finally:
            self.compiler.aggregates = None
        start = self._count(p.skip, "SKIP") if p.skip is not None else 0
        stop = start + self._count(p.limit, "LIMIT") if p.limit is not None else None
        if not aggregates and not p.distinct and not p.order and p.where is None and cap is not None:
            stop = start + cap if stop is None else min(stop, start + cap)
        if not aggregates and not p.distinct and not p.order:
            rows = itertools.islice(rows, stop)  # the rows after `stop` are never read
        pairs = self._grouped(compiled, aggregates, rows) if aggregates else [
            (out, {**row, **out}) for row in rows for out in [{a: f(row) for a, f, _ in compiled}]
        ]  # fmt: skip
        if p.distinct:
            seen: set[Any] = set()
            unique = []
            for out, env in pairs:
                key = hashable(list(out.values()))
                if key not in seen:
                    seen.add(key)
                    unique.append((out, env))
            pairs = unique
        for fn, desc in reversed(order):
            pairs.sort(key=lambda pair, f=fn: SortKey(f(pair[1])), reverse=desc)  # type: ignore[misc]
        kept = pairs[start:stop]
        if p.where is not None:  # WITH … WHERE sees the variables before the WITH too
            test = self.compiler.compile(p.where)
            kept = [(out, env) for out, env in kept if truth(test(env)) is True]
        return [a for a, _, _ in compiled], [out for out, _ in kept]

    def _grouped(
        self, compiled: list[tuple[str, Fn, bool]], aggregates: list[Aggregate], rows: Iterable[Row]
    ) -> list[tuple[Row, Row]]:
        """Rows grouped by the items that do not aggregate; each group keeps its first
        row and, per aggregate, the values it reads (not the rows: a count over millions
        of rows keeps a list of small numbers)."""
        keys = [(a, f) for a, f, has_aggregate in compiled if not has_aggregate]
        groups: dict[Any, tuple[Row, list[list[Any]]]] = {}
        for row in rows:
            self.deadline.tick()
            key = hashable([f(row) for _, f in keys])
            group = groups.get(key)
            if group is None:
                group = groups[key] = (row, [[] for _ in aggregates])
            for agg, values in zip(aggregates, group[1], strict=True):
                values.append(1 if agg.arg is None else agg.arg(row))
        if not groups and not keys:
            groups[()] = ({}, [[] for _ in aggregates])  # an aggregate over nothing is one row (count 0)
        pairs = []
        for first, read in groups.values():
            env = dict(first)
            for agg, values in zip(aggregates, read, strict=True):
                env[agg.slot] = aggregate(agg, values, first)
            out = {a: f(env) for a, f, _ in compiled}
            pairs.append((out, {**env, **out}))
        return pairs

    def _count(self, e: s.Expr, clause: str) -> int:
        value = self.compiler.compile(e)({})
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise UserError(f"{clause} takes a whole number of rows, not {value!r}")
        return value

    # -- procedures ----------------------------------------------------------------------
    def _call(self, c: s.ProcedureCall, rows: Iterable[Row]) -> tuple[list[str], list[Row]]:
        args = [self.compiler.compile(a)({}) for a in c.args]
        records = self._procedure(c.name, args)
        fields = list(records[0]) if records else _PROCEDURE_FIELDS.get(c.name.lower(), [])
        yields = c.yields or [(f, f) for f in fields]
        test = self.compiler.compile(c.where) if c.where is not None else None
        out = []
        for row in rows:
            for record in records:
                extended = {**row, **{alias: record.get(f) for f, alias in yields}}
                if test is None or truth(test(extended)) is True:
                    out.append(extended)
        return [alias for _, alias in yields], out

    def _procedure(self, written: str, args: list[Any]) -> list[dict[str, Any]]:
        g, name = self.graph, written.lower()
        if name == "db.labels":
            return [{"label": x} for x in sorted(g.by_label)]
        if name == "db.relationshiptypes":
            return [{"relationshipType": x} for x in sorted({r.type for r in g.rels})]
        if name == "db.propertykeys":
            keys = {k for n in g.nodes for k in n.props} | {k for r in g.rels for k in r.props}
            return [{"propertyKey": x} for x in sorted(keys)]
        if name == "db.index.fulltext.querynodes":
            return self._fulltext(*args)
        raise Unsupported(f"the procedure {written} is not supported on the embedded store")

    def _fulltext(self, index: Any, words: Any, *_: Any) -> list[dict[str, Any]]:
        """The texts' full-text index, approximated: a node scores by how often the
        query's words occur in its questions, texts and resolutions (not Lucene's
        scoring or syntax: phrases, wildcards and boolean operators are read as words)."""
        if index != statements.FULLTEXT_INDEX:
            raise UserError(
                f"no full-text index {index!r} on the embedded store (it has {statements.FULLTEXT_INDEX!r})"
            )
        terms = {w for w in _words(str(words or "")) if w not in ("and", "or", "not")}
        found: list[tuple[float, Any]] = []
        for kind in statements.FULLTEXT_KINDS:
            for node in self.graph.by_label.get(kind.value, []):
                text = " ".join(str(node.props[p]) for p in statements.FULLTEXT_PROPS if node.props.get(p))
                tokens = _words(text)
                hits = sum(1 for t in tokens if t in terms)
                if hits:
                    found.append((hits / math.sqrt(len(tokens)), node))
        found.sort(key=lambda pair: -pair[0])
        return [{"node": node, "score": score} for score, node in found]


_PROCEDURE_FIELDS = {"db.index.fulltext.querynodes": ["node", "score"]}


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())
