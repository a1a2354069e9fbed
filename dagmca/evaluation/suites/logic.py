"""Logic grid puzzles: n people, each with one value of every category (a pet, a
colour, a drink), every value held by exactly one person. Clues are drawn from a hidden
solution until a solver that tries every assignment finds exactly one that fits, then
each clue that is not needed is dropped (so every clue left is needed); the question
asks for one cell. The checker solves the clues again and requires the answer unique.
Difficulty: 1 is 3 people and 2 categories, 2 is 4 and 2, 3 is 4 and 3."""

from __future__ import annotations

import random
from itertools import permutations
from typing import Any

from dagmca.evaluation.suites.base import NAMES, Generator, Made
from dagmca.evaluation.tasks import Task

CATEGORIES = {
    "pet": ("cat", "dog", "parrot", "hamster", "rabbit"),
    "colour": ("red", "green", "blue", "yellow", "violet"),
    "drink": ("tea", "coffee", "juice", "cocoa", "water"),
}
SIZES = {1: (3, 2), 2: (4, 2), 3: (4, 3)}
Solution = dict[str, tuple[str, ...]]  # category -> the value of each person, in order
# a clue: ("is", person, category, value) / ("not", person, category, value) /
# ("same", category, value, category2, value2) / ("apart", category, value, category2, value2)
Clue = tuple[Any, ...]


def holds(clue: Clue, people: tuple[str, ...], s: Solution) -> bool:
    kind = clue[0]
    if kind in ("is", "not"):
        _, person, cat, value = clue
        said = s[cat][people.index(person)] == value
        return said if kind == "is" else not said
    _, cat, value, cat2, value2 = clue
    same = s[cat].index(value) == s[cat2].index(value2)
    return same if kind == "same" else not same


def _cats(clue: Clue) -> set[str]:
    return {clue[2]} if clue[0] in ("is", "not") else {clue[1], clue[3]}


def solutions(
    people: tuple[str, ...], values: dict[str, tuple[str, ...]], clues: list[Clue]
) -> list[Solution]:
    """Every assignment the clues allow (up to two: more says the same), by trying each
    category's orderings in turn and checking a clue once its categories are set."""
    cats = list(values)
    found: list[Solution] = []

    def extend(s: Solution, rest: list[str]) -> None:
        if len(found) > 1:
            return
        if not rest:
            found.append(dict(s))
            return
        cat, later = rest[0], rest[1:]
        now = [c for c in clues if cat in _cats(c) and _cats(c) <= {*s, cat}]
        for order in permutations(values[cat]):
            s[cat] = order
            if all(holds(c, people, s) for c in now):
                extend(s, later)
            del s[cat]

    extend({}, cats)
    return found


def _clue(rng: random.Random, people: tuple[str, ...], s: Solution) -> Clue:
    cats = list(s)
    kind = rng.choice(("is", "not", "same", "apart") if len(cats) > 1 else ("is", "not"))
    if kind in ("is", "not"):
        person = rng.choice(people)
        cat = rng.choice(cats)
        value = s[cat][people.index(person)]
        if kind == "not":
            value = rng.choice([v for v in s[cat] if v != value])
        return (kind, person, cat, value)
    cat, cat2 = rng.sample(cats, 2)
    i = rng.randrange(len(people))
    j = i if kind == "same" else rng.choice([k for k in range(len(people)) if k != i])
    return (kind, cat, s[cat][i], cat2, s[cat2][j])


VERBS = {
    "pet": ("keeps the {}", "keep the {}"),
    "colour": ("wears {}", "wear {}"),
    "drink": ("drinks {}", "drink {}"),
}
WHO = {
    "pet": "the person who keeps the {}",
    "colour": "the person who wears {}",
    "drink": "the person who drinks {}",
}


def say(clue: Clue) -> str:
    """A clue in words."""
    kind = clue[0]
    if kind == "is":
        return f"{clue[1]} {VERBS[clue[2]][0].format(clue[3])}."
    if kind == "not":
        return f"{clue[1]} does not {VERBS[clue[2]][1].format(clue[3])}."
    first, second = WHO[clue[1]].format(clue[2]), WHO[clue[3]].format(clue[4])
    return f"{first[0].upper()}{first[1:]} {'is' if kind == 'same' else 'is not'} {second}."


def make(rng: random.Random, index: int, difficulty: int) -> Made:
    n, k = SIZES.get(difficulty, SIZES[2])
    people = tuple(sorted(rng.sample(NAMES, n)))
    cats = sorted(rng.sample(list(CATEGORIES), k))
    values = {c: tuple(sorted(rng.sample(CATEGORIES[c], n))) for c in cats}
    hidden = {c: tuple(rng.sample(values[c], n)) for c in cats}
    clues: list[Clue] = []
    while len(solutions(people, values, clues)) != 1:
        clue = _clue(rng, people, hidden)
        if clue not in clues:
            clues.append(clue)
    for clue in list(clues):  # keep only the clues the answer needs
        rest = [c for c in clues if c != clue]
        if len(solutions(people, values, rest)) == 1:
            clues = rest
    cat = rng.choice(cats)
    person = rng.choice(people)
    answer = hidden[cat][people.index(person)]
    lists = "; ".join(f"{c}s: {', '.join(values[c])}" for c in cats)
    question = (
        f"{', '.join(people[:-1])} and {people[-1]} each have exactly one of each of these, and no two have "
        f"the same one ({lists}). {' '.join(say(c) for c in clues)} Which {cat} goes with {person}? "
        f"Answer with the {cat} alone."
    )
    task = Task(id=f"logic-{index:03d}", question=question, answer=answer, scoring="exact")
    spec = {"people": list(people), "values": {c: list(v) for c, v in values.items()},
            "clues": [list(c) for c in clues], "category": cat, "person": person}  # fmt: skip
    return Made(task, spec)


def check(made: Made) -> bool:
    """The clues solved again: exactly one assignment, and its cell is the answer."""
    spec = made.spec
    people = tuple(spec["people"])
    values = {c: tuple(v) for c, v in spec["values"].items()}
    found = solutions(people, values, [tuple(c) for c in spec["clues"]])
    if len(found) != 1:
        return False
    return found[0][spec["category"]][people.index(spec["person"])] == made.task.answer


GENERATOR = Generator(
    "logic-grid",
    "logic grid puzzles with a unique solution, proved by a solver (difficulty: the grid)",
    make,
    check,
)
