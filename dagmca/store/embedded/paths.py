"""Shortest paths by breadth-first search over the engine's graph: `shortestPath`,
`allShortestPaths` and Neo4j 5's path selectors (`SHORTEST k`, `ALL SHORTEST`,
`SHORTEST k GROUPS`, `ANY k`), for each pair of end nodes.

Neo4j's rules for a path of length 0: with a lower bound of 0, a node is its own
shortest path; `shortestPath` and `allShortestPaths` with a lower bound of 1 refuse a
pair whose ends are one node (Neo4j's default), while a selector finds the shortest
cycle back to it. A path never uses a relationship twice."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from dagmca.errors import UserError
from dagmca.store.embedded.limits import Deadline
from dagmca.store.embedded.values import Node, Rel

Walk = tuple[tuple[Node, ...], tuple[Rel, ...]]  # the nodes and the relationships, in order
Steps = Callable[[Node, frozenset[int]], Iterable[tuple[Rel, Node]]]


@dataclass(frozen=True)
class Selector:
    """`kind`: shortestPath, allShortestPaths, shortest (k paths), all (all shortest),
    groups (the k shortest lengths) or any (k paths)."""

    kind: str
    k: int = 1

    def keeps_all_of_a_length(self) -> bool:
        return self.kind in ("allShortestPaths", "all", "groups")


def select(
    selector: Selector,
    start: Node,
    steps: Steps,
    hops: tuple[int, int | None],
    is_end: Callable[[Node], bool],
    deadline: Deadline,
    targets: frozenset[int] | None = None,
) -> Iterator[Walk]:
    """The paths the selector keeps from `start` to each end node `is_end` accepts
    (`targets`: the end nodes, when they are known: the search stops once each has its
    paths)."""
    min_hops, max_hops = hops
    legacy = selector.kind in ("shortestPath", "allShortestPaths")
    if legacy and min_hops > 1:
        raise UserError(
            f"{selector.kind}() takes a lower bound of 0 or 1 on its relationship, not {min_hops}"
        )
    zero = min_hops == 0 and is_end(start)
    if legacy and not zero and is_end(start):
        raise UserError(
            f"{selector.kind}() cannot find a shortest path whose start and end are the same node "
            "(as on Neo4j by default): give the pattern a lower bound of 0, or leave that pair out "
            "(WHERE a <> b)"
        )
    if zero:
        yield (start,), ()  # a node is its own shortest path
    simple = selector.kind in ("shortestPath", "allShortestPaths", "all") or (
        selector.kind in ("shortest", "any") and selector.k == 1
    )
    if simple and min_hops <= 1:
        yield from _by_node(start, steps, max_hops, is_end, deadline, every=selector.keeps_all_of_a_length())
        if is_end(start) and not zero:  # the shortest cycle back to the start
            cycle = frozenset({start.key})
            yield from _by_walk(selector, start, steps, (1, max_hops), lambda n: n is start, deadline, cycle)
        return
    seed = {start.key: [0]} if zero else {}
    yield from _by_walk(selector, start, steps, (max(min_hops, 1), max_hops), is_end, deadline, targets, seed)


def _by_node(
    start: Node,
    steps: Steps,
    max_hops: int | None,
    is_end: Callable[[Node], bool],
    deadline: Deadline,
    *,
    every: bool,
) -> Iterator[Walk]:
    """Breadth first, each node reached once (at its distance): one shortest path to
    each end node, or (`every`) all of them, through every parent at the distance before."""
    distance: dict[int, int] = {start.key: 0}
    parents: dict[int, list[tuple[Rel, Node]]] = {}
    layer = [start]
    depth = 0
    while layer and (max_hops is None or depth < max_hops):
        depth += 1
        reached: list[Node] = []
        for node in layer:
            for rel, other in steps(node, frozenset()):
                deadline.tick()
                seen = distance.get(other.key)
                if seen is None:
                    distance[other.key] = depth
                    parents[other.key] = [(rel, node)]
                    reached.append(other)
                elif seen == depth and every:
                    parents[other.key].append((rel, node))
        for node in reached:
            if is_end(node):
                walks = _unwound(node, parents, start)
                yield from walks if every else walks[:1]
        layer = reached


def _unwound(end: Node, parents: dict[int, list[tuple[Rel, Node]]], start: Node) -> list[Walk]:
    """Every path from `start` to `end` through the parents' links."""
    if end is start:
        return [((start,), ())]
    out: list[Walk] = []
    for rel, prev in parents[end.key]:
        for nodes, rels in _unwound(prev, parents, start):
            out.append(((*nodes, end), (*rels, rel)))
    return out


def _by_walk(
    selector: Selector,
    start: Node,
    steps: Steps,
    hops: tuple[int, int | None],
    is_end: Callable[[Node], bool],
    deadline: Deadline,
    targets: frozenset[int] | None = None,
    seed: dict[int, list[int]] | None = None,
) -> Iterator[Walk]:
    """Breadth first over paths (a relationship used once in each), shortest first:
    for each end node, the paths the selector keeps among those of `hops` lengths."""
    min_hops, max_hops = hops
    kept: dict[int, list[int]] = dict(seed or {})  # end node -> the lengths of the paths kept
    queue: deque[tuple[Walk, frozenset[int]]] = deque([(((start,), ()), frozenset())])
    while queue:
        (nodes, rels), used = queue.popleft()
        length = len(rels)
        if max_hops is not None and length >= max_hops:
            continue
        if targets is not None and all(_done(selector, kept.get(t, []), length + 1) for t in targets):
            return
        for rel, other in steps(nodes[-1], used):
            deadline.tick()
            walk = ((*nodes, other), (*rels, rel))
            if (
                length + 1 >= min_hops
                and is_end(other)
                and _keeps(selector, kept.setdefault(other.key, []), length + 1)
            ):
                yield walk
            queue.append((walk, used | {rel.key}))


def _done(selector: Selector, lengths: list[int], length: int) -> bool:
    """Whether an end has all the paths it can keep, before paths of `length` come."""
    if selector.kind == "all":
        return bool(lengths) and length > lengths[0]
    if selector.kind == "groups":
        return len(set(lengths)) >= selector.k and length > max(lengths)
    return len(lengths) >= selector.k


def _keeps(selector: Selector, lengths: list[int], length: int) -> bool:
    """Whether a path of `length` to an end is kept, given the lengths kept before (the
    paths come shortest first); records it when it is."""
    if selector.kind == "all":
        ok = not lengths or length == lengths[0]
    elif selector.kind == "groups":
        ok = length in lengths or len(set(lengths)) < selector.k
    else:
        ok = len(lengths) < selector.k
    if ok:
        lengths.append(length)
    return ok
