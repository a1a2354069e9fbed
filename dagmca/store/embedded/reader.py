"""Reading tokens and patterns: what the clause parser and the expression parser share."""

from __future__ import annotations

from dagmca.store.embedded import syntax as s
from dagmca.store.embedded.syntax import CypherSyntaxError, Token, Unsupported

_QUANTIFIED = "quantified path patterns (( … ){m,n}, -->+) are not supported on the embedded store"


def _alternatives(e: s.LabelExpr) -> list[str] | None:
    """The types of `A|B|C` (or of `A`); None for anything richer."""
    if e.op == "label":
        return [e.name]
    if e.op == "or" and all(p.op == "label" for p in e.parts):
        return [p.name for p in e.parts]
    return None


class Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = s.tokenize(text)
        self.pos = 0

    # -- tokens -------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def peek(self, ahead: int = 1) -> Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def is_word(self, *words: str, tok: Token | None = None) -> bool:
        t = tok or self.tok
        return t.kind == "name" and t.text.upper() in words

    def is_op(self, *ops: str, tok: Token | None = None) -> bool:
        t = tok or self.tok
        return t.kind == "op" and t.text in ops

    def next(self) -> Token:
        t = self.tok
        self.pos += 1
        return t

    def expect_op(self, op: str) -> Token:
        if not self.is_op(op):
            self.fail(f"expected {op!r}")
        return self.next()

    def expect_word(self, word: str) -> Token:
        if not self.is_word(word):
            self.fail(f"expected {word}")
        return self.next()

    def name(self) -> str:
        if self.tok.kind != "name":
            self.fail("expected a name")
        return str(self.next().value)

    def fail(self, what: str) -> None:
        shown = repr(self.tok.text) if self.tok.text else "the end of the query"
        raise CypherSyntaxError(
            f"cannot read the query: {what} at {shown} ({s.position(self.text, self.tok.start)})"
        )

    def expr(self) -> s.Expr:
        raise NotImplementedError  # the expression parser's

    def body(self, *, needs_return: bool) -> s.Query:
        raise NotImplementedError  # the clause parser's: `{ query }`

    def where(self) -> s.Expr | None:
        if not self.is_word("WHERE"):
            return None
        self.next()
        return self.expr()

    def pattern_where(self, patterns: list[s.PathPattern], where: s.Expr | None) -> s.Expr | None:
        """`where`, joined by AND with the WHERE inside each node and relationship pattern."""
        wheres = [n.where for p in patterns for n in p.nodes] + [r.where for p in patterns for r in p.rels]
        inner = [w for w in wheres if w is not None]
        for extra in inner:
            where = extra if where is None else s.Binary("and", where, extra)
        return where

    def args(self) -> list[s.Expr]:
        """Arguments after '(' up to and including ')'."""
        args: list[s.Expr] = []
        while not self.is_op(")"):
            args.append(self.expr())
            if not self.is_op(","):
                break
            self.next()
        self.expect_op(")")
        return args

    # -- patterns -------------------------------------------------------------------
    def path(self) -> s.PathPattern:
        var = None
        if self.tok.kind == "name" and self.is_op("=", tok=self.peek()):
            var = self.name()
            self.next()
        if self.tok.kind == "name" and self.is_op("(", tok=self.peek()):
            return self.shortest_function(var)
        selector = self.path_selector()
        if self.is_op("(") and self.is_op("(", tok=self.peek()):
            raise Unsupported(_QUANTIFIED)
        nodes, rels = [self.node()], []
        while self.is_op("-", "<"):
            rels.append(self.rel())
            self.quantifier(rels[-1])
            nodes.append(self.node())
        if selector is not None and len(rels) != 1:
            raise Unsupported(
                "a path selector (SHORTEST, ANY, ALL SHORTEST) over a pattern of other than one relationship "
                "is not supported on the embedded store"
            )
        return s.PathPattern(var, nodes, rels, selector)

    def shortest_function(self, var: str | None) -> s.PathPattern:
        """`shortestPath((a)-[*]-(b))` or `allShortestPaths(…)`, after the path variable."""
        written = self.name()
        kind = {"shortestpath": "shortestPath", "allshortestpaths": "allShortestPaths"}.get(written.lower())
        if kind is None:
            self.fail("expected a pattern")
        assert kind is not None
        self.expect_op("(")
        inner = self.path()
        self.expect_op(")")
        if len(inner.rels) != 1 or inner.selector is not None:
            raise CypherSyntaxError(f"cannot read the query: {written}() takes a pattern of one relationship")
        return s.PathPattern(var, inner.nodes, inner.rels, (kind, 1))

    def path_selector(self) -> tuple[str, int] | None:
        """Neo4j 5's `SHORTEST k [GROUPS]`, `ALL SHORTEST`, `ANY SHORTEST`, `ANY [k]`, `ALL`."""
        if not self.is_word("SHORTEST", "ANY", "ALL"):
            return None
        word = self.next().text.upper()
        selector: tuple[str, int] | None
        if word == "SHORTEST":
            k = self._count()
            selector = ("groups", k) if self.is_word("GROUP", "GROUPS") else ("shortest", k)
            if self.is_word("GROUP", "GROUPS"):
                self.next()
        elif self.is_word("SHORTEST"):
            self.next()
            selector = ("all", 0) if word == "ALL" else ("shortest", 1)
        else:
            selector = ("any", self._count() if self.tok.kind == "number" else 1) if word == "ANY" else None
        if self.is_word("PATH", "PATHS"):
            self.next()
        return selector

    def _count(self) -> int:
        if self.tok.kind != "number" or not isinstance(self.tok.value, int):
            self.fail("expected a number of paths")
        return int(self.next().value)

    def quantifier(self, rel: s.RelPattern) -> None:
        """A quantified relationship (`-[:R]->+`, `-->*`, `-->{1,3}`): variable length."""
        if not self.is_op("+", "*", "{"):
            return
        if rel.variable_length:
            self.fail("a relationship is quantified once")
        rel.variable_length = True
        op = self.next().text
        if op != "{":
            rel.min_hops, rel.max_hops = (1 if op == "+" else 0), None
            return
        low = int(self.next().value) if self.tok.kind == "number" else None
        if self.is_op(","):
            self.next()
            high = int(self.next().value) if self.tok.kind == "number" else None
        else:
            high = low
        self.expect_op("}")
        rel.min_hops, rel.max_hops = (low or 0), high

    def node(self) -> s.NodePattern:
        self.expect_op("(")
        var = self.name() if self.tok.kind == "name" else None
        node = s.NodePattern(var, [], {})
        if self.is_op(":"):
            self.next()
            found = self.label_or()
            plain = found.plain()
            node.labels, node.label_expr = (plain, None) if plain is not None else ([], found)
        node.props = self.map_items() if self.is_op("{") else {}
        node.where = self.where()
        self.expect_op(")")
        return node

    # -- label expressions: | binds loosest, then & (or :), then !; % is any label ---------
    def label_or(self) -> s.LabelExpr:
        parts = [self.label_and()]
        while self.is_op("|") and self._label_follows():
            self.next()
            if self.is_op(":"):
                self.next()
            parts.append(self.label_and())
        return parts[0] if len(parts) == 1 else s.LabelExpr("or", parts=tuple(parts))

    def label_and(self) -> s.LabelExpr:
        parts = [self.label_not()]
        while self.is_op("&", ":") and self._label_follows():
            self.next()
            parts.append(self.label_not())
        return parts[0] if len(parts) == 1 else s.LabelExpr("and", parts=tuple(parts))

    def label_not(self) -> s.LabelExpr:
        if self.is_op("$"):
            raise Unsupported("dynamic labels and types ($(…)) are not supported on the embedded store")
        if self.is_op("!"):
            self.next()
            return s.LabelExpr("not", parts=(self.label_not(),))
        if self.is_op("%"):
            self.next()
            return s.LabelExpr("any")
        if self.is_op("("):
            self.next()
            inner = self.label_or()
            self.expect_op(")")
            return inner
        return s.LabelExpr("label", self.name())

    def _label_follows(self) -> bool:
        """Whether a label comes after the operator at hand: in `[x IN xs WHERE x:A | x.id]`
        the `|` starts the projection, since a label is not followed by `.`, `(` or `[`."""
        after = self.peek()
        if self.is_op("!", "%", "(", ":", tok=after):
            return True
        return after.kind == "name" and not self.is_op(".", "(", "[", tok=self.peek(2))

    def rel(self) -> s.RelPattern:
        incoming = self.is_op("<")
        if incoming:
            self.next()
        self.expect_op("-")
        rel = s.RelPattern(None, [], "both", {})
        if self.is_op("["):
            self.next()
            if self.tok.kind == "name":
                rel.var = self.name()
            if self.is_op(":"):
                self.next()
                found = self.label_or()
                alternatives = _alternatives(found)
                rel.types, rel.type_expr = (alternatives, None) if alternatives else ([], found)
            if self.is_op("*"):
                self.next()
                rel.variable_length, rel.min_hops, rel.max_hops = True, 1, None
                if self.tok.kind == "number":
                    rel.min_hops = rel.max_hops = int(self.next().value)
                if self.is_op(".."):
                    self.next()
                    rel.max_hops = int(self.next().value) if self.tok.kind == "number" else None
            if self.is_op("{"):
                rel.props = self.map_items()
            rel.where = self.where()
            self.expect_op("]")
        self.expect_op("-")
        outgoing = self.is_op(">")
        if outgoing:
            self.next()
        # `<-->`, pointing both ways, is either way, as `--` is
        rel.direction = "both" if incoming == outgoing else "in" if incoming else "out"
        return rel

    def map_items(self) -> dict[str, s.Expr]:
        self.expect_op("{")
        items: dict[str, s.Expr] = {}
        while not self.is_op("}"):
            key = str(self.next().value) if self.tok.kind in ("name", "string") else self.name()
            self.expect_op(":")
            items[key] = self.expr()
            if not self.is_op(","):
                break
            self.next()
        self.expect_op("}")
        return items
