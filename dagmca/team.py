"""The MCA agent tree: `depth` levels, `cpp` children per parent.

Level 0 is the root integrator, the last level holds the specialists (leaves),
levels in between are coordinators. Names are `L{level}N{number}`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from dagmca.graph import Role

# an observer call on a group of sibling turns (--observer-calls siblings) reads at most
# this many; its output reserve holds a flag per lens per turn
SIBLINGS_PER_CHECK = 4

T = TypeVar("T")


def sibling_groups(
    items: Sequence[T], parent: Callable[[T], str | None], per_check: int = SIBLINGS_PER_CHECK
) -> list[list[T]]:
    """`items` (agents, or their turns) grouped by parent, in order of first appearance,
    each group cut into chunks of at most `per_check`: what one observer call checks.
    The engine groups a phase's turns with it and the estimate counts the calls with it,
    so the formula is the grouping that runs."""
    by_parent: dict[str | None, list[T]] = {}
    for item in items:
        by_parent.setdefault(parent(item), []).append(item)
    return [group[k : k + per_check] for group in by_parent.values() for k in range(0, len(group), per_check)]


@dataclass(frozen=True)
class Agent:
    name: str
    level: int
    number: int
    role: Role
    perspective: str
    parent: str | None
    children: tuple[str, ...] = ()

    @property
    def is_leaf(self) -> bool:
        return not self.children


@dataclass
class AgentTree:
    cpp: int
    depth: int
    agents: dict[str, Agent] = field(default_factory=dict)

    @property
    def root(self) -> Agent:
        return self.agents["L0N1"]

    def level(self, level: int) -> list[Agent]:
        return [a for a in self.agents.values() if a.level == level]

    @property
    def leaves(self) -> list[Agent]:
        return self.level(self.depth - 1)

    def children(self, name: str) -> list[Agent]:
        return [self.agents[c] for c in self.agents[name].children]

    def siblings(self, name: str) -> list[Agent]:
        parent = self.agents[name].parent
        if parent is None:
            return []
        return [a for a in self.children(parent) if a.name != name]

    def calls_per_round(self, signals: bool, reflect: bool = False) -> int:
        """The seed's cost table: respond + lateral per leaf, observe + lateral per
        coordinator, root observe, one signal per non-leaf. Only children skip lateral.
        With self-reflection, one more call per agent (re-broadcasts come on top)."""
        calls = len(self.agents) if reflect else 0
        if self.depth == 1:
            return calls + 1
        for a in self.agents.values():
            if a.is_leaf:
                calls += 1
            else:
                calls += 1 + int(signals)
            if a.parent is not None and self.siblings(a.name):
                calls += 1
        return calls

    def sibling_checks_per_round(self, signals: bool, per_check: int) -> int:
        """Observer calls in one round with --observer-calls siblings: one per group of a
        phase's turns by one parent's children (at most `per_check` to a group), for the
        phases `calls_per_round` counts without self-reflection."""
        if self.depth == 1:
            return 1

        def groups(agents: list[Agent]) -> int:
            return len(sibling_groups(agents, lambda a: a.parent, per_check))

        checks = 0
        for level in range(self.depth - 1, 0, -1):  # leaves respond, coordinators observe
            agents = self.level(level)
            checks += 2 * groups(agents) if self.cpp > 1 else groups(agents)  # then lateral
        checks += 1  # the root observes
        if signals:
            checks += groups([a for a in self.agents.values() if not a.is_leaf])
        return checks

    def legacy_calls(self) -> int:
        """The seed's legacy (top-down) pass: a decomposition per non-leaf, an answer per
        leaf, one synthesis at the root. Strange loops come on top."""
        return 1 if self.depth == 1 else len(self.agents) + 1


def build_tree(cpp: int, depth: int, perspectives: tuple[str, ...]) -> AgentTree:
    if cpp < 1 or depth < 1:
        raise ValueError("cpp and depth must be at least 1")
    tree = AgentTree(cpp=cpp, depth=depth)
    for level in range(depth):
        count = cpp**level
        for n in range(1, count + 1):
            leaf = level == depth - 1
            if level == 0:
                role = Role.INTEGRATOR
            elif leaf:
                role = Role.SPECIALIST
            else:
                role = Role.COORDINATOR
            perspective = perspectives[(n - 1) % len(perspectives)] if leaf else "integrative"
            parent = None if level == 0 else f"L{level - 1}N{(n - 1) // cpp + 1}"
            children = () if leaf else tuple(f"L{level + 1}N{(n - 1) * cpp + k}" for k in range(1, cpp + 1))
            name = f"L{level}N{n}"
            tree.agents[name] = Agent(name, level, n, role, perspective, parent, children)
    return tree
