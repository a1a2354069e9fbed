"""Cypher's expressions, by precedence: OR, XOR, AND, NOT, comparisons, + -, * / %, ^,
unary minus, then property access, indexes and slices on an atom (a literal, a
parameter, a variable, a function call, or one of the compound forms)."""

from __future__ import annotations

import math

from dagmca.store.embedded import syntax as s
from dagmca.store.embedded.expression_forms import COMPARE, FormParser
from dagmca.store.embedded.syntax import CypherSyntaxError, Unsupported
from dagmca.store.embedded.types import read_type


class ExprParser(FormParser):
    # -- expressions ----------------------------------------------------------------
    def expr(self) -> s.Expr:
        start = self.tok.start
        e = self.or_()
        e.text = self.text[start : self.tokens[self.pos - 1].end]
        return e

    def _chain(self, word: str, lower: str) -> s.Expr:
        sub = getattr(self, lower)
        left: s.Expr = sub()
        while self.is_word(word):
            self.next()
            left = s.Binary(word.lower(), left, sub())
        return left

    def or_(self) -> s.Expr:
        return self._chain("OR", "xor")

    def xor(self) -> s.Expr:
        return self._chain("XOR", "and_")

    def and_(self) -> s.Expr:
        return self._chain("AND", "not_")

    def not_(self) -> s.Expr:
        if self.is_word("NOT"):
            self.next()
            return s.Unary("not", self.not_())
        return self.comparison()

    def comparison(self) -> s.Expr:
        left = self.predicate()
        while self.is_op(*COMPARE):
            op = self.next().text
            left = s.Binary("<>" if op == "!=" else op, left, self.predicate())
        return left

    def predicate(self) -> s.Expr:
        """IS [NOT] NULL, IN, CONTAINS, STARTS WITH and ENDS WITH, which bind tighter than
        the comparisons: `a IS NULL = b IS NULL` compares two truths."""
        left = self.additive()
        while True:
            if self.is_word("IN"):
                self.next()
                left = s.Binary("in", left, self.additive())
            elif self.is_word("CONTAINS"):
                self.next()
                left = s.Binary("contains", left, self.additive())
            elif self.is_word("STARTS", "ENDS") and self.is_word("WITH", tok=self.peek()):
                op = self.next().text.lower()
                self.next()
                left = s.Binary(f"{op} with", left, self.additive())
            elif self.is_word("IS"):
                left = self.is_predicate(left)
            elif self.is_op("::"):
                self.next()
                left = s.TypePredicate(left, read_type(self))
            else:
                return left

    def is_predicate(self, left: s.Expr) -> s.Expr:
        """After the subject: `IS [NOT] NULL`, `IS [NOT] :: type`, `IS [NOT] TYPED type`."""
        self.expect_word("IS")
        negated = self.is_word("NOT")
        if negated:
            self.next()
        if self.is_op("::") or self.is_word("TYPED"):
            self.next()
            return s.TypePredicate(left, read_type(self), negated)
        if self.is_word("NORMALIZED", "NFC", "NFD", "NFKC", "NFKD"):
            raise Unsupported(
                "the normalization predicate (IS NORMALIZED) is not supported on the embedded store"
            )
        self.expect_word("NULL")
        return s.Unary("is not null" if negated else "is null", left)

    def additive(self) -> s.Expr:
        left = self.multiplicative()
        while self.is_op("+", "-", "||"):
            op = self.next().text
            left = s.Binary(op, left, self.multiplicative())
        return left

    def multiplicative(self) -> s.Expr:
        left = self.power()
        while self.is_op("*", "/", "%"):
            op = self.next().text
            left = s.Binary(op, left, self.power())
        return left

    def power(self) -> s.Expr:
        left = self.unary()
        while self.is_op("^"):
            self.next()
            left = s.Binary("^", left, self.unary())
        return left

    def unary(self) -> s.Expr:
        if self.is_op("-") and self.peek().kind == "number":  # a negative literal: -9223372036854775808 fits
            self.next()
            return self.postfix(self.number(negative=True))
        if self.is_op("-", "+"):
            op = self.next().text
            return s.Unary(op, self.unary())
        return self.postfix(self.atom())

    def number(self, *, negative: bool = False) -> s.Expr:
        """A number literal, which must fit Cypher's 64-bit integers and floats."""
        t = self.next()
        value = 0 - t.value if negative else t.value  # 0 - x: no negative zero, as in Neo4j
        if isinstance(value, int) and not -(2**63) <= value < 2**63:
            raise CypherSyntaxError(
                f"cannot read the query: the integer {t.text} is too large ({s.position(self.text, t.start)})"
            )
        if isinstance(value, float) and math.isinf(value):
            raise CypherSyntaxError(
                f"cannot read the query: the float {t.text} is too large ({s.position(self.text, t.start)})"
            )
        return s.Literal(value)

    def postfix(self, e: s.Expr) -> s.Expr:
        while True:
            if self.is_op("."):
                self.next()
                e = s.Prop(e, self.name())
            elif self.is_op("["):
                self.next()
                start = None if self.is_op("..") else self.expr()
                if self.is_op(".."):
                    self.next()
                    stop = None if self.is_op("]") else self.expr()
                    e = s.Slice(e, start, stop)
                else:
                    assert start is not None
                    e = s.Index(e, start)
                self.expect_op("]")
            elif self.is_op(":"):
                self.next()
                e = s.HasLabels(e, self.label_or())
            elif self.is_op("{") and isinstance(e, s.Var):
                e = self.map_projection(e)
            else:
                return e

    def atom(self) -> s.Expr:
        t = self.tok
        if t.kind == "number":
            return self.number()
        if t.kind == "string":
            self.next()
            return s.Literal(t.value)
        if t.kind == "param":
            self.next()
            return s.Param(str(t.value))
        if self.is_op("["):
            return self.list_or_comprehension()
        if self.is_op("{"):
            return s.MapExpr(self.map_items())
        if self.is_op("("):
            return self.parenthesised()
        if t.kind != "name":
            self.fail("expected an expression")
        word = t.text.upper()
        if word in ("TRUE", "FALSE", "NULL"):
            self.next()
            return s.Literal({"TRUE": True, "FALSE": False, "NULL": None}[word])
        if word == "CASE":
            return self.case()
        if word in ("EXISTS", "COUNT", "COLLECT") and self.is_op("{", tok=self.peek()):
            return self.subquery(word)
        self.next()
        if self.is_op("(") or (self.is_op(".") and self._dotted_call()):
            return self.function(str(t.value))
        return s.Var(str(t.value))

    def _dotted_call(self) -> bool:
        """Whether `name.name…(` follows: a namespaced function, not a property."""
        i = self.pos
        while self.is_op(".", tok=self.tokens[i]) and self.tokens[i + 1].kind == "name":
            i += 2
        return self.is_op("(", tok=self.tokens[i])

    def function(self, first: str) -> s.Expr:
        parts = [first]
        while self.is_op("."):
            self.next()
            parts.append(self.name())
        self.expect_op("(")
        call = s.Call(".".join(parts).lower(), [], written=".".join(parts))
        if call.name == "reduce":
            return self.reduce()
        if self.is_op("*"):
            self.next()
            call.star = True
            self.expect_op(")")
            return call
        if self.is_word("DISTINCT"):
            self.next()
            call.distinct = True
        if call.name in ("all", "any", "none", "single") and self.is_word("IN", tok=self.peek()):
            var = self.name()
            self.next()
            source = self.expr()
            call.args = [s.Comprehension(var, source, self.where(), None)]
            self.expect_op(")")
            return call
        call.args = self.args()
        form = call.args[1] if call.name == "normalize" and len(call.args) == 2 else None
        if isinstance(form, s.Var) and form.name.upper() in ("NFC", "NFD", "NFKC", "NFKD"):
            call.args[1] = s.Literal(form.name.upper())  # `normalize(x, NFKC)`: a word, not a variable
        return call
