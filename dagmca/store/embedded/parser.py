"""A recursive-descent parser for read-only Cypher: MATCH, OPTIONAL MATCH, WHERE, WITH,
UNWIND, RETURN, ORDER BY, SKIP, LIMIT, UNION and CALL of a procedure, with the
expression language the cookbook uses. What it does not read is refused by name."""

from __future__ import annotations

from dagmca.store.embedded import syntax as s
from dagmca.store.embedded.expression_parser import ExprParser
from dagmca.store.embedded.semantics import check
from dagmca.store.embedded.syntax import CypherSyntaxError, Unsupported

_WRITES = ("CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "FOREACH", "LOAD", "DROP")
# Clauses of Neo4j's Cypher this engine does not run: named when refused. Any other word
# where a clause belongs is not Cypher, and the query cannot be read.
_OTHER_CLAUSES = (
    "USE", "SHOW", "TERMINATE", "FINISH", "FILTER", "LET", "NEXT", "INSERT", "ALTER", "GRANT",
    "DENY", "REVOKE", "START", "STOP", "ENABLE", "RENAME", "ORDER", "OFFSET", "SKIP", "LIMIT",
)  # fmt: skip


def parse(text: str) -> s.Query:
    """The query, read and checked (variables of one kind, defined where used)."""
    query = Parser(text).query()
    check(query)
    return query


class Parser(ExprParser):
    # -- clauses ------------------------------------------------------------------
    def query(self) -> s.Query:
        if self.is_word("EXPLAIN", "PROFILE"):
            word = self.tok.text.upper()
            raise Unsupported(
                f"{word} asks for the query's plan, and plans are Neo4j's: the embedded store has no planner",
                f"run it on Neo4j (`dagmca push SESSION --to bolt://…`, then --store), or leave out {word}",
            )
        self.options()
        query = self.union(needs_return=True)
        if self.is_op(";"):
            self.next()
        if self.tok.kind != "eof":
            self.fail("unexpected text")
        return query

    def options(self) -> None:
        """`CYPHER 5` and the planner's options (`CYPHER runtime=slotted`): read, and
        nothing to do (the embedded store has one Cypher and no planner)."""
        while self.is_word("CYPHER"):
            self.next()
            if self.tok.kind == "number":
                self.next()
            while self.tok.kind == "name" and self.is_op("=", tok=self.peek()):
                self.next()
                self.next()
                self.next()

    def union(self, *, needs_return: bool) -> s.Query:
        parts = [self.clauses(needs_return=needs_return)]
        union_all: bool | None = None
        while self.is_word("UNION"):
            self.next()
            this_all = self.is_word("ALL")
            if this_all:
                self.next()
            if union_all is not None and union_all != this_all:
                raise CypherSyntaxError("cannot mix UNION and UNION ALL in one query")
            union_all = this_all
            parts.append(self.clauses(needs_return=True))
        return s.Query(parts, bool(union_all))

    def body(self, *, needs_return: bool) -> s.Query:
        """`{ query }`: a subquery's, which may end without RETURN unless `needs_return`."""
        self.expect_op("{")
        query = self.union(needs_return=needs_return)
        self.expect_op("}")
        return query

    def clauses(self, *, needs_return: bool = True) -> list[s.Clause]:
        out: list[s.Clause] = []
        while self.tok.kind != "eof" and not self.is_word("UNION") and not self.is_op(";", "}"):
            word = self.tok.text.upper() if self.tok.kind == "name" else self.tok.text
            if word == "OPTIONAL" and self.is_word("CALL", tok=self.peek()):
                raise Unsupported("OPTIONAL CALL is not supported on the embedded store")
            if word in ("MATCH", "OPTIONAL"):
                out.append(self.match())
            elif word == "UNWIND":
                self.next()
                expr = self.expr()
                self.expect_word("AS")
                out.append(s.Unwind(expr, self.name()))
            elif word in ("WITH", "RETURN"):
                out.append(self.projection(final=word == "RETURN"))
            elif word == "CALL":
                out.append(self.call())
            elif word in _WRITES:
                raise Unsupported(f"{word} writes, and the embedded store runs read-only Cypher")
            elif word == "WHEN":
                raise Unsupported("conditional queries (WHEN … THEN) are not supported on the embedded store")
            elif word in _OTHER_CLAUSES:
                raise Unsupported(f"the {word} clause is not supported on the embedded store")
            else:
                self.fail("expected a clause (MATCH, WITH, UNWIND, CALL, RETURN…)")
        returns = [i for i, c in enumerate(out) if isinstance(c, s.Projection) and c.final]
        standalone_call = len(out) == 1 and isinstance(out[0], s.ProcedureCall)
        if not out or (returns and returns != [len(out) - 1]):
            self.fail("a query ends with one RETURN")
        if needs_return and not standalone_call and not returns:
            raise CypherSyntaxError("cannot read the query: a read query ends with one RETURN")
        return out

    def match(self) -> s.Match:
        optional = self.is_word("OPTIONAL")
        if optional:
            self.next()
        self.expect_word("MATCH")
        if self.is_word("REPEATABLE"):
            raise Unsupported("the match mode REPEATABLE ELEMENTS is not supported on the embedded store")
        if self.is_word("DIFFERENT"):  # the default match mode
            self.next()
            self.expect_word("RELATIONSHIPS")
        patterns = [self.path()]
        while self.is_op(","):
            self.next()
            patterns.append(self.path())
        return s.Match(patterns, self.pattern_where(patterns, self.where()), optional)

    def projection(self, *, final: bool) -> s.Projection:
        self.next()
        p = s.Projection(items=[], final=final)
        if self.is_word("DISTINCT"):
            self.next()
            p.distinct = True
        if self.is_op("*"):
            self.next()
            p.star = True
            if self.is_op(","):
                self.next()
                p.items = self.items()
        else:
            p.items = self.items()
        if self.is_word("ORDER"):
            self.next()
            self.expect_word("BY")
            while True:
                expr = self.expr()
                descending = False
                if self.is_word("DESC", "DESCENDING", "ASC", "ASCENDING"):
                    descending = self.next().text.upper().startswith("DESC")
                p.order.append((expr, descending))
                if not self.is_op(","):
                    break
                self.next()
        if self.is_word("SKIP"):
            self.next()
            p.skip = self.expr()
        if self.is_word("LIMIT"):
            self.next()
            p.limit = self.expr()
        if not final:
            p.where = self.where()
        return p

    def items(self) -> list[s.Item]:
        items = []
        while True:
            expr = self.expr()
            alias, aliased = expr.text, isinstance(expr, s.Var)
            if self.is_word("AS"):
                self.next()
                alias, aliased = self.name(), True
            items.append(s.Item(expr, alias, aliased))
            if not self.is_op(","):
                return items
            self.next()

    def call(self) -> s.ProcedureCall | s.SubqueryCall:
        self.next()
        scope: list[str] | None = None
        if self.is_op("("):  # CALL (a, b) { … }: the variables the subquery sees
            self.next()
            scope = []
            while not self.is_op(")"):
                if self.is_op("*"):
                    self.next()
                    scope.append("*")
                else:
                    scope.append(self.name())
                if not self.is_op(","):
                    break
                self.next()
            self.expect_op(")")
        if self.is_op("{"):
            query = self.body(needs_return=True)
            if self.is_word("IN") and self.is_word("TRANSACTIONS", tok=self.peek()):
                raise Unsupported("CALL { … } IN TRANSACTIONS writes, and the embedded store only reads")
            return s.SubqueryCall(query, scope)
        parts = [self.name()]
        while self.is_op("."):
            self.next()
            parts.append(self.name())
        args: list[s.Expr] = []
        if self.is_op("("):  # a procedure called on its own may leave out its parentheses
            self.next()
            args = self.args()
        yields: list[tuple[str, str]] = []
        if self.is_word("YIELD") and self.is_op("*", tok=self.peek()):
            self.next()
            self.next()
        elif self.is_word("YIELD"):
            self.next()
            while True:
                field = self.name()
                alias = field
                if self.is_word("AS"):
                    self.next()
                    alias = self.name()
                yields.append((field, alias))
                if not self.is_op(","):
                    break
                self.next()
        return s.ProcedureCall(".".join(parts), args, yields, self.where())
