"""The openCypher TCK's read scenarios on the embedded store's engine: how many give the
expected rows (or the expected error).

    git clone https://github.com/opencypher/openCypher /tmp/openCypher
    git -C /tmp/openCypher checkout 677cbafa   # the commit the querying guide's figures are of
    .venv/bin/python scripts/tck_read.py /tmp/openCypher/tck/features [--failures]

A scenario is a read scenario when its query writes nothing. It is run when its graph
is made by `CREATE` alone (`Given an empty graph` and `having executed: CREATE …`); a
named graph, a procedure the TCK defines, or a setup that reads before it creates, is
counted as not run. dagmca's
store holds only its own schema (its kinds of nodes and types of relationships), so the
TCK's graphs, with any labels and properties, are built straight into the engine's graph.
The TCK writes a temporal value as its text, so a temporal value is compared as Neo4j's
toString() writes it.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagmca.errors import DagmcaError
from dagmca.store.embedded import syntax as s
from dagmca.store.embedded.engine import Engine
from dagmca.store.embedded.expression_compiler import Compiler
from dagmca.store.embedded.expression_parser import ExprParser
from dagmca.store.embedded.parser import parse
from dagmca.store.embedded.temporal import Duration, Temporal
from dagmca.store.embedded.temporal import text as temporal_text
from dagmca.store.embedded.values import Graph, Node, Rel, hashable
from dagmca.store.embedded.values import Path as CypherPath

_WRITES = re.compile(r"\b(CREATE|MERGE|SET|DELETE|REMOVE|FOREACH|LOAD\s+CSV)\b", re.IGNORECASE)


class _NoGraph:
    """A setup's property values are literals: nothing to match."""

    def rows(self, patterns: Any, where: Any, row: Any) -> Any:
        raise DagmcaError("a CREATE property reads the graph")

    def subquery(self, query: Any, row: Any, cap: Any) -> Any:
        raise DagmcaError("a CREATE property runs a subquery")


def build(setups: list[str], params: dict[str, Any]) -> Graph:
    """The graph of `CREATE` statements (clauses of patterns, nothing else)."""
    nodes: list[Node] = []
    rels: list[Rel] = []
    compiler = Compiler(params, _NoGraph())
    for text in setups:
        reader = ExprParser(text)
        bound: dict[str, Node] = {}
        while reader.tok.kind != "eof":
            reader.expect_word("CREATE")
            patterns = [reader.path()]
            while reader.is_op(","):
                reader.next()
                patterns.append(reader.path())
            for p in patterns:
                made = [_node(n, bound, nodes, compiler) for n in p.nodes]
                for i, r in enumerate(p.rels):
                    start, end = (made[i], made[i + 1]) if r.direction == "out" else (made[i + 1], made[i])
                    props = {k: compiler.compile(v)({}) for k, v in r.props.items()}
                    rel = Rel(
                        len(rels), r.types[0], start, end, {k: v for k, v in props.items() if v is not None}
                    )
                    rels.append(rel)
                    start.out.append(rel)
                    end.inc.append(rel)
    return Graph.of(nodes, rels)


def _node(n: s.NodePattern, bound: dict[str, Node], nodes: list[Node], compiler: Compiler) -> Node:
    if n.var and n.var in bound:
        return bound[n.var]
    props = {k: compiler.compile(v)({}) for k, v in n.props.items()}
    node = Node(len(nodes), tuple(n.labels), {k: v for k, v in props.items() if v is not None})
    nodes.append(node)
    if n.var:
        bound[n.var] = node
    return node


# -- values, as text both sides agree on ----------------------------------------------
def canon(v: Any, unordered: bool = False) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, Temporal | Duration):  # the TCK writes a temporal value as its text
        return repr(temporal_text(v))
    if isinstance(v, list):
        items = [canon(x, unordered) for x in v]
        return "[" + ", ".join(sorted(items) if unordered else items) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {canon(v[k], unordered)}" for k in sorted(v)) + "}"
    if isinstance(v, Node):
        return "(" + "".join(f":{x}" for x in sorted(v.labels)) + _props(v.props) + ")"
    if isinstance(v, Rel):
        return f"[:{v.type}{_props(v.props)}]"
    if isinstance(v, CypherPath):
        out = canon(v.nodes[0])
        for i, r in enumerate(v.rels):
            forward = r.start is v.nodes[i]
            out += ("-" if forward else "<-") + canon(r) + ("->" if forward else "-") + canon(v.nodes[i + 1])
        return "<" + out + ">"
    return f"?{type(v).__name__}"


def _props(props: dict[str, Any]) -> str:
    return (" " + canon(props)) if props else ""


class Expected(ExprParser):
    """A TCK table cell: literals, lists, maps, nodes `(:A {k: v})`, relationships
    `[:T {k: v}]` and paths `<(:A)-[:T]->(:B)>`, read into the values `canon` shows."""

    def value(self) -> Any:
        t = self.tok
        if self.is_op("("):
            return self.tck_node()
        if self.is_op("[") and self.is_op(":", tok=self.peek()):
            return self.tck_rel()
        if self.is_op("<"):
            self.next()
            nodes, rels = [self.tck_node()], []
            while not self.is_op(">"):
                back = self.is_op("<")
                if back:
                    self.next()
                self.expect_op("-")
                rel = self.tck_rel()
                self.expect_op("-")
                if not back:
                    self.expect_op(">")
                nodes.append(self.tck_node())
                start, end = (nodes[-1], nodes[-2]) if back else (nodes[-2], nodes[-1])
                rels.append(Rel(0, rel.type, start, end, rel.props))
            self.next()
            return CypherPath(tuple(nodes), tuple(rels))
        if self.is_op("["):
            self.next()
            items = []
            while not self.is_op("]"):
                items.append(self.value())
                if self.is_op(","):
                    self.next()
            self.next()
            return items
        if self.is_op("{"):
            return self.tck_map()
        if self.is_op("-"):
            self.next()
            return -self.value()
        self.next()
        if t.kind in ("number", "string"):
            return t.value
        return {"TRUE": True, "FALSE": False, "NULL": None}.get(t.text.upper(), f"?{t.text}")

    def tck_map(self) -> dict[str, Any]:
        self.expect_op("{")
        out = {}
        while not self.is_op("}"):
            key = self.name()
            self.expect_op(":")
            out[key] = self.value()
            if self.is_op(","):
                self.next()
        self.next()
        return out

    def tck_node(self) -> Node:
        self.expect_op("(")
        labels = []
        while self.is_op(":"):
            self.next()
            labels.append(self.name())
        props = self.tck_map() if self.is_op("{") else {}
        self.expect_op(")")
        return Node(0, tuple(labels), props)

    def tck_rel(self) -> Rel:
        self.expect_op("[")
        self.expect_op(":")
        kind = self.name()
        props = self.tck_map() if self.is_op("{") else {}
        self.expect_op("]")
        return Rel(0, kind, Node(0, (), {}), Node(0, (), {}), props)


def cell(text: str, unordered: bool) -> str:
    return canon(Expected(text).value(), unordered)


# -- features ------------------------------------------------------------------------------
def scenarios(text: str) -> list[tuple[str, list[str]]]:
    """(title, step lines) per scenario, outlines expanded with their examples."""
    out: list[tuple[str, list[str]]] = []
    blocks = re.split(r"\n\s*(?=Scenario(?: Outline)?:)", text)
    # a Background's steps come before each scenario's
    background = blocks[0].split("Background:", 1)[1].splitlines()[1:] if "Background:" in blocks[0] else []
    for block in blocks[1:]:
        lines = block.splitlines()
        title = lines[0].split(":", 1)[1].strip()
        if "Examples:" not in block:
            out.append((title, background + lines[1:]))
            continue
        body, examples = block.split("Examples:", 1)
        rows = [r for r in examples.splitlines() if r.strip().startswith("|")]
        header = [c.strip() for c in rows[0].strip().strip("|").split("|")]
        for row in rows[1:]:
            values = [c.strip() for c in row.strip().strip("|").split("|")]
            filled = body
            for k, v in zip(header, values, strict=False):
                filled = filled.replace(f"<{k}>", v)
            out.append((f"{title} {values}", background + filled.splitlines()[1:]))
    return out


def docstring(lines: list[str], i: int) -> tuple[str, int]:
    j = i + 1
    while '"""' not in lines[j]:
        j += 1
    k = j + 1
    while '"""' not in lines[k]:
        k += 1
    return "\n".join(x.strip() for x in lines[j + 1 : k]), k + 1


def table(lines: list[str], i: int) -> tuple[list[list[str]], int]:
    rows = []
    while i < len(lines) and lines[i].strip().startswith("|"):
        rows.append([c.strip() for c in lines[i].strip()[1:-1].split("|")])
        i += 1
    return rows, i


def run_scenario(steps: list[str]) -> str:
    """pass, fail, not-run (its graph is not CREATE alone) or write (not a read scenario)."""
    setups: list[str] = []
    params: dict[str, Any] = {}
    query = ""
    i = 0
    while i < len(steps):
        line = steps[i].strip()
        if re.match(r"(Given|And) the .* graph", line) or "there exists a procedure" in line:
            return "not-run"
        if line.endswith("having executed:"):
            text, i = docstring(steps, i)
            setups.append(text)
            continue
        if line.endswith("parameters are:"):
            rows, i = table(steps, i + 1)
            params = {k: Expected(v).value() for k, v in rows}
            continue
        if line.startswith("When executing query:"):
            query, i = docstring(steps, i)
            if _WRITES.search(query):
                return "write"
            continue
        if line.startswith("Then"):
            return _check(line, steps[i + 1 :], setups, params, query)
        i += 1
    return "not-run"


def _check(then: str, rest: list[str], setups: list[str], params: dict[str, Any], query: str) -> str:
    if any(re.search(r"\b(MATCH|UNWIND|WITH|MERGE|FOREACH|CALL)\b", x, re.IGNORECASE) for x in setups):
        return "not-run"
    try:
        graph = build(setups, params)
    except DagmcaError:
        return "not-run"
    try:
        parsed = parse(query)
        engine = Engine(graph, params)
        results = [engine.run_part(part) for part in parsed.parts]
    except DagmcaError as exc:
        if "should be raised" in then:
            return "fail" if type(exc).__name__ == "Unsupported" else "pass"
        return "fail"
    except Exception:  # a crash is a failure of the engine, counted, not raised
        return "fail"
    if "should be raised" in then:
        return "fail"
    keys = results[0][0]
    rows = [r for _, part in results for r in part]
    if len(results) > 1 and not parsed.union_all:
        rows = list({hashable([r[k] for k in keys]): r for r in rows}.values())
    expected, _ = table(rest, 0)
    unordered = "ignoring element order for lists" in then
    if not expected:
        return "pass" if not rows else "fail"
    header, body = expected[0], expected[1:]
    if header != keys and "empty" not in then:
        return "fail"
    try:
        want = [[cell(c, unordered) for c in row] for row in body]
    except DagmcaError:
        return "not-run"
    got = [[canon(r[k], unordered) for k in keys] for r in rows]
    if "in order" in then:
        return "pass" if want == got else "fail"
    return "pass" if sorted(want) == sorted(got) else "fail"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("features", type=Path, help="the TCK's tck/features folder")
    parser.add_argument("--failures", action="store_true", help="list the scenarios that fail")
    args = parser.parse_args()
    counts: Counter[str] = Counter()
    by_area: dict[str, Counter[str]] = {}
    for feature in sorted(args.features.rglob("*.feature")):
        area = str(feature.parent.relative_to(args.features))
        for title, steps in scenarios(feature.read_text(encoding="utf-8")):
            outcome = run_scenario(steps)
            counts[outcome] += 1
            by_area.setdefault(area, Counter())[outcome] += 1
            if args.failures and outcome == "fail":
                print(f"fail: {feature.name}: {title}")
    for area, c in sorted(by_area.items()):
        if c["pass"] + c["fail"]:
            print(f"{area}: {c['pass']} of {c['pass'] + c['fail']} run ({c['not-run']} not run)")
    read = counts["pass"] + counts["fail"] + counts["not-run"]
    print(
        f"read scenarios: {read}; run: {counts['pass'] + counts['fail']}; passed: {counts['pass']}; "
        f"not run (a named graph, or a setup that is not CREATE alone): {counts['not-run']}"
    )


if __name__ == "__main__":
    main()
