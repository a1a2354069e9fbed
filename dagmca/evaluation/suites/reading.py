"""Passage reading: a short report the generator writes about a made-up town's sites
(each with a year it opened, a count of staff and of visitors), with sentences that
state nothing asked among them; the question is answered by the facts the generator put
in: one fact (difficulty 1), the difference of two (2), or which site has the most
visitors per staff member (3). The checker reads the facts back out of the passage's own
sentences and works the answer out again."""

from __future__ import annotations

import random
import re

from dagmca.evaluation.suites.base import Generator, Made
from dagmca.evaluation.tasks import Task

TOWNS = ("Marrowby", "Quillhaven", "Ostervale", "Brindlemoor", "Carrowmere", "Tessford", "Wendlecombe")
SITES = ("North Library", "Harbour Museum", "Old Mill Gallery", "Riverside Pool", "Hill Observatory",
         "Market Hall", "Glass House")  # fmt: skip
FILLER = (
    "The council meets on the first Monday of each month.",
    "Most residents walk or cycle to work.",
    "A new footbridge was proposed last spring but not yet approved.",
    "Local bakers hold a fair every autumn.",
    "The bus timetable changes twice a year.",
)
FACT = re.compile(
    r"The (?P<site>[A-Z][\w ]+?) opened in (?P<year>\d{4}), has (?P<staff>\d+) staff and welcomed "
    r"(?P<visitors>[\d,]+) visitors last year\."
)


def make(rng: random.Random, index: int, difficulty: int) -> Made:
    town = rng.choice(TOWNS)
    sites = rng.sample(SITES, 3 + min(difficulty, 3))
    facts = {s: (rng.randint(1890, 2015), rng.randint(4, 60), rng.randint(900, 90000)) for s in sites}
    while len({v / n for _, n, v in facts.values()}) < len(facts):  # one site the most, without a tie
        facts = {s: (y, n, v + 1) for s, (y, n, v) in facts.items()}
    said = [
        f"The {s} opened in {y}, has {n} staff and welcomed {v:,} visitors last year."
        for s, (y, n, v) in facts.items()
    ]
    body = said + rng.sample(FILLER, 2 + difficulty)
    rng.shuffle(body)
    passage = f"A report on the public sites of {town}. " + " ".join(body)
    a, b = rng.sample(sites, 2)
    if difficulty <= 1:
        q, answer, scoring = f"In what year did the {a} open?", str(facts[a][0]), "numeric"
    elif difficulty == 2:
        q = f"How many more visitors did the {a} welcome last year than the {b}? A negative number if fewer."
        answer, scoring = str(facts[a][2] - facts[b][2]), "numeric"
    else:
        best = max(sites, key=lambda s: facts[s][2] / facts[s][1])
        q, answer, scoring = (
            "Which site welcomed the most visitors per staff member last year? Name the site.",
            best,
            "exact",
        )
    task = Task(id=f"read-{index:03d}", question=q, passage=passage, answer=answer, scoring=scoring)
    return Made(task, {"kind": difficulty, "a": a, "b": b})


def check(made: Made) -> bool:
    """The facts read back from the passage's sentences, the answer worked out again."""
    assert made.task.passage is not None
    facts = {
        m["site"]: (int(m["year"]), int(m["staff"]), int(m["visitors"].replace(",", "")))
        for m in FACT.finditer(made.task.passage)
    }
    spec, said = made.spec, str(made.task.answer)
    if spec["a"] not in facts or spec["b"] not in facts:
        return False
    if spec["kind"] <= 1:
        return said == str(facts[spec["a"]][0])
    if spec["kind"] == 2:
        return said == str(facts[spec["a"]][2] - facts[spec["b"]][2])
    ranked = sorted(facts, key=lambda s: facts[s][2] / facts[s][1], reverse=True)
    return (
        said == ranked[0]
        and facts[ranked[0]][2] / facts[ranked[0]][1] > facts[ranked[1]][2] / facts[ranked[1]][1]
    )


GENERATOR = Generator(
    "reading",
    "questions answered by facts a generated passage states (difficulty: combining them)",
    make,
    check,
)
