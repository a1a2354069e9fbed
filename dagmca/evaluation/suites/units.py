"""Unit-conversion chains: a quantity in one unit, asked for in another reached through
a chain of definitions (inches, feet, yards, miles, metres; teaspoons to litres; minutes
to weeks); difficulty lengthens the chain. Answers are exact fractions rounded to four
significant figures and scored as numbers. The checker converts again through the other
end of the chain (every unit to its base and back), in exact fractions."""

from __future__ import annotations

import random
from fractions import Fraction

from dagmca.evaluation.suites.base import Generator, Made
from dagmca.evaluation.tasks import Task

# each family: units in order, each with how many of the one before make it (the first is 1)
FAMILIES = {
    "length": [("inch", Fraction(1)), ("foot", Fraction(12)), ("yard", Fraction(3)), ("chain", Fraction(22)),
               ("furlong", Fraction(10)), ("mile", Fraction(8))],
    "metric length": [("millimetre", Fraction(1)), ("centimetre", Fraction(10)), ("metre", Fraction(100)),
                      ("kilometre", Fraction(1000))],
    "volume": [("teaspoon", Fraction(1)), ("tablespoon", Fraction(3)), ("fluid ounce", Fraction(2)),
               ("cup", Fraction(8)), ("pint", Fraction(2)), ("quart", Fraction(2)), ("gallon", Fraction(4))],
    "time": [("second", Fraction(1)), ("minute", Fraction(60)), ("hour", Fraction(60)), ("day", Fraction(24)),
             ("week", Fraction(7))],
}  # fmt: skip
THINGS = {"length": "a trail", "metric length": "a cable", "volume": "a recipe's stock", "time": "a voyage"}


def _base(family: str, unit: str) -> Fraction:
    """How many of the family's first unit one `unit` is."""
    size = Fraction(1)
    for name, factor in FAMILIES[family]:
        size *= factor
        if name == unit:
            return size
    raise KeyError(unit)


def _sig(value: Fraction) -> str:
    """To four significant figures, written out (141100, not 1.411e+05)."""
    rounded = float(f"{float(value):.4g}")
    return f"{rounded:.10f}".rstrip("0").rstrip(".")


def make(rng: random.Random, index: int, difficulty: int) -> Made:
    family = rng.choice(list(FAMILIES))
    units = FAMILIES[family]
    gap = min(len(units) - 1, 1 + difficulty)
    i = rng.randrange(len(units) - gap)
    j = i + gap
    small, large = units[i][0], units[j][0]
    if rng.random() < 0.5:
        start, goal = large, small
        amount = Fraction(rng.randint(2, 400), rng.choice((1, 2, 4)))
    else:
        start, goal = small, large
        amount = Fraction(rng.randint(20, 90000))
    chain = ", ".join(
        f"one {u} is {int(f)} {p}s" for (p, _), (u, f) in zip(units[i:j], units[i + 1 : j + 1], strict=True)
    )
    answer = amount * _base(family, start) / _base(family, goal)
    thing = THINGS[family][0].upper() + THINGS[family][1:]
    q = (
        f"{thing} measures {float(amount):g} {start}s. Given that {chain}, how many {goal}s is that? "
        "Give the number to four significant figures."
    )
    task = Task(id=f"unit-{index:03d}", question=q, answer=_sig(answer), scoring="numeric")
    spec = {"family": family, "amount": [amount.numerator, amount.denominator], "from": start, "to": goal}
    return Made(task, spec)


def check(made: Made) -> bool:
    """Converted again by walking the chain one step at a time, in exact fractions."""
    spec = made.spec
    names = [u for u, _ in FAMILIES[spec["family"]]]
    factors = [f for _, f in FAMILIES[spec["family"]]]
    value = Fraction(spec["amount"][0], spec["amount"][1])
    a, b = names.index(spec["from"]), names.index(spec["to"])
    for k in range(a, b, 1 if b > a else -1):
        value = value / factors[k + 1] if b > a else value * factors[k]
    return _sig(value) == str(made.task.answer)


GENERATOR = Generator(
    "unit-chains", "unit conversions through a chain of definitions (difficulty: the chain)", make, check
)
