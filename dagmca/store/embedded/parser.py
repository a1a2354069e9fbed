"""A recursive-descent parser for read-only Cypher: MATCH, OPTIONAL MATCH, WHERE, WITH,
UNWIND, RETURN, ORDER BY, SKIP, LIMIT, UNION and CALL of a procedure, with the
expression language the cookbook uses. What it does not read is refused by name."""

from __future__ import annotations

from dagmca.store.embedded import syntax as s
from dagmca.store.embedded.expressions import ExprParser
from dagmca.store.embedded.syntax import CypherSyntaxError, Unsupported

_WRITES = ("CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "FOREACH", "LOAD", "DROP")
# Clauses of Neo4j's Cypher this engine does not run: named when refused. Any other word
# where a clause belongs is not Cypher, and the query cannot be read.
_OTHER_CLAUSES = (
    "USE", "SHOW", "TERMINATE", "FINISH", "FILTER", "LET", "NEXT", "INSERT", "ALTER", "GRANT",
    "DENY", "REVOKE", "START", "STOP", "ENABLE", "RENAME", "ORDER", "OFFSET", "SKIP", "LIMIT",
)  # fmt: skip


def parse(text: str) -> s.Query:
    return Parser(text).query()


class Parser(ExprParser):
    # -- clauses ------------------------------------------------------------------
    def query(self) -> s.Query:
        parts = [self.clauses()]
        union_all: bool | None = None
        while self.is_word("UNION"):
            self.next()
            this_all = self.is_word("ALL")
            if this_all:
                self.next()
            if union_all is not None and union_all != this_all:
                raise CypherSyntaxError("cannot mix UNION and UNION ALL in one query")
            union_all = this_all
            parts.append(self.clauses())
        if self.is_op(";"):
            self.next()
        if self.tok.kind != "eof":
            self.fail("unexpected text")
        return s.Query(parts, bool(union_all))

    def clauses(self) -> list[s.Clause]:
        out: list[s.Clause] = []
        while self.tok.kind != "eof" and not self.is_word("UNION") and not self.is_op(";"):
            word = self.tok.text.upper() if self.tok.kind == "name" else self.tok.text
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
            elif word in _OTHER_CLAUSES:
                raise Unsupported(f"the {word} clause is not supported on the embedded store")
            else:
                self.fail("expected a clause (MATCH, WITH, UNWIND, CALL, RETURN…)")
        returns = [i for i, c in enumerate(out) if isinstance(c, s.Projection) and c.final]
        standalone_call = len(out) == 1 and isinstance(out[0], s.ProcedureCall)
        if not standalone_call and returns != [len(out) - 1]:
            raise CypherSyntaxError("cannot read the query: a read query ends with one RETURN")
        return out

    def match(self) -> s.Match:
        optional = self.is_word("OPTIONAL")
        if optional:
            self.next()
        self.expect_word("MATCH")
        patterns = [self.path()]
        while self.is_op(","):
            self.next()
            patterns.append(self.path())
        return s.Match(patterns, self.where(), optional)

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
            alias = expr.text
            if self.is_word("AS"):
                self.next()
                alias = self.name()
            items.append(s.Item(expr, alias))
            if not self.is_op(","):
                return items
            self.next()

    def call(self) -> s.ProcedureCall:
        self.next()
        if self.is_op("{"):
            raise Unsupported("CALL { … } subqueries are not supported on the embedded store")
        parts = [self.name()]
        while self.is_op("."):
            self.next()
            parts.append(self.name())
        self.expect_op("(")
        args = self.args()
        yields: list[tuple[str, str]] = []
        if self.is_word("YIELD"):
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
