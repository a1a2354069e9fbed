"""Cypher's compound expressions: map projections, list and pattern comprehensions,
parenthesised expressions and patterns used as predicates, CASE (with the extended
simple form), reduce, and the COUNT, EXISTS and COLLECT subqueries."""

from __future__ import annotations

from dagmca.store.embedded import syntax as s
from dagmca.store.embedded.reader import Reader
from dagmca.store.embedded.syntax import CypherSyntaxError, Unsupported

COMPARE = ("=", "<>", "!=", "<", ">", "<=", ">=", "=~")
_CLAUSES = ("MATCH", "OPTIONAL", "WITH", "UNWIND", "CALL", "RETURN")


class FormParser(Reader):
    def additive(self) -> s.Expr:
        raise NotImplementedError  # the expression parser's

    def is_predicate(self, left: s.Expr) -> s.Expr:
        raise NotImplementedError  # the expression parser's: `IS [NOT] NULL`, `IS :: type`

    def map_projection(self, subject: s.Expr) -> s.Expr:
        """`n {.a, .*, key: expression, variable}`."""
        self.expect_op("{")
        items: list[tuple[str, str, s.Expr | None]] = []
        while not self.is_op("}"):
            if self.is_op("."):
                self.next()
                if self.is_op("*"):
                    self.next()
                    items.append(("all", "*", None))
                else:
                    items.append(("prop", self.name(), None))
            elif self.is_op(":", tok=self.peek()):
                key = self.name()
                self.next()
                items.append(("pair", key, self.expr()))
            else:
                key = self.name()
                items.append(("var", key, s.Var(key)))
            if not self.is_op(","):
                break
            self.next()
        self.expect_op("}")
        return s.MapProjection(subject, items)

    def list_or_comprehension(self) -> s.Expr:
        self.expect_op("[")
        if self.tok.kind == "name" and self.is_word("IN", tok=self.peek()):
            var = self.name()
            self.next()
            source = self.expr()
            where = self.where()
            project = None
            if self.is_op("|"):
                self.next()
                project = self.expr()
            self.expect_op("]")
            return s.Comprehension(var, source, where, project)
        if self.is_op("(") or (self.tok.kind == "name" and self.is_op("=", tok=self.peek())):
            found = self.pattern_comprehension()
            if found is not None:
                return found
        items = []
        while not self.is_op("]"):
            items.append(self.expr())
            if not self.is_op(","):
                break
            self.next()
        self.expect_op("]")
        return s.ListExpr(items)

    def parenthesised(self) -> s.Expr:
        """`( expression )`, or a pattern used as a predicate: `(a)-[:R]->(b)`."""
        saved = self.pos
        try:
            path = self.path()
        except (CypherSyntaxError, Unsupported):
            path = None
        if path is not None and path.rels:
            return s.Exists([path], self.pattern_where([path], None), bare=True)
        self.pos = saved
        self.expect_op("(")
        e = self.expr()
        self.expect_op(")")
        return e

    def case(self) -> s.Expr:
        self.expect_word("CASE")
        subject = None if self.is_word("WHEN") else self.expr()
        whens: list[tuple[s.Expr, s.Expr, bool]] = []  # (condition, result, a predicate already)
        while self.is_word("WHEN"):
            self.next()
            extended = subject is not None and (self.is_op(*COMPARE) or self.is_word("IS"))
            cond = self.extended_when(subject) if subject is not None and extended else self.expr()
            self.expect_word("THEN")
            whens.append((cond, self.expr(), extended))
        default = None
        if self.is_word("ELSE"):
            self.next()
            default = self.expr()
        self.expect_word("END")
        if subject is not None and any(extended for _, _, extended in whens):
            # `WHEN < 3`, `WHEN IS NULL`: a searched CASE, each WHEN a predicate on the subject
            searched = [(c if extended else s.Binary("=", subject, c), r) for c, r, extended in whens]
            return s.Case(None, searched, default)
        return s.Case(subject, [(c, r) for c, r, _ in whens], default)

    def extended_when(self, subject: s.Expr) -> s.Expr:
        """`WHEN < 3` or `WHEN IS NULL` in a simple CASE: the subject compared."""
        if self.is_word("IS"):
            return self.is_predicate(subject)
        op = self.next().text
        return s.Binary("<>" if op == "!=" else op, subject, self.additive())

    def reduce(self) -> s.Expr:
        """`reduce(acc = initial, x IN list | expression)`, after `reduce(`."""
        accumulator = self.name()
        self.expect_op("=")
        initial = self.expr()
        self.expect_op(",")
        var = self.name()
        self.expect_word("IN")
        source = self.expr()
        self.expect_op("|")
        body = self.expr()
        self.expect_op(")")
        return s.Reduce(accumulator, initial, var, source, body)

    def pattern_comprehension(self) -> s.Expr | None:
        """`[(a)-->(b) WHERE … | expression]` after `[`, or None (and nothing read) when
        what follows is a list."""
        saved = self.pos
        try:
            path = self.path()
        except (CypherSyntaxError, Unsupported):
            path = None
        if path is None or not path.rels or not (self.is_word("WHERE") or self.is_op("|")):
            self.pos = saved
            return None
        where = self.pattern_where([path], self.where())
        self.expect_op("|")
        project = self.expr()
        self.expect_op("]")
        return s.PatternComprehension(path, where, project)

    def subquery(self, word: str) -> s.Expr:
        """`EXISTS { … }`, `COUNT { … }` or `COLLECT { … }`: around a pattern (and a
        WHERE), or a full query."""
        self.next()
        if self.is_word(*_CLAUSES, tok=self.peek()):
            query = self.body(needs_return=word == "COLLECT")
            return s.Subquery(word.lower(), query)
        if word == "COLLECT":
            self.fail("COLLECT { … } holds a query that ends with RETURN")
        self.expect_op("{")
        patterns = [self.path()]
        while self.is_op(","):
            self.next()
            patterns.append(self.path())
        where = self.pattern_where(patterns, self.where())
        self.expect_op("}")
        if word == "EXISTS":
            return s.Exists(patterns, where)
        return s.Subquery("count", s.Query([[s.Match(patterns, where)]]))
