# ruff: noqa: E501  (the tasks are data: one task a line reads best)
"""Write the swarm's shipped streams under examples/swarm/, from a seed:

- arithmetic.jsonl and units.jsonl: reference tasks (scored as `dagmca eval` scores);
- code.jsonl: small Python tasks with tests (string, list, math, logic) and their
  reference solutions, which tests/test_swarm_streams.py runs through the executor;
- mixed.jsonl: all of them, shuffled into one stream.

    .venv/bin/python scripts/make_swarm_tasks.py --out DIR [--seed 7]
    .venv/bin/python scripts/make_swarm_tasks.py --out examples/swarm   # the shipped streams, rewritten

It writes only where --out says, so a run does not rewrite the shipped streams unasked.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

CODE: list[dict[str, Any]] = [
    {"type": "string", "entry_point": "reverse_words", "prompt": "Write reverse_words(s) that returns the words of s in reverse order, joined by single spaces.",
     "tests": ["assert reverse_words('a b c') == 'c b a'", "assert reverse_words('  hi   there ') == 'there hi'", "assert reverse_words('') == ''"],
     "solution": "def reverse_words(s):\n    return ' '.join(reversed(s.split()))\n"},
    {"type": "string", "entry_point": "is_palindrome", "prompt": "Write is_palindrome(s) that says whether s reads the same backwards, ignoring case and anything not a letter or digit.",
     "tests": ["assert is_palindrome('A man, a plan, a canal: Panama')", "assert not is_palindrome('hello')", "assert is_palindrome('')"],
     "solution": "def is_palindrome(s):\n    t = [c.lower() for c in s if c.isalnum()]\n    return t == t[::-1]\n"},
    {"type": "string", "entry_point": "count_vowels", "prompt": "Write count_vowels(s) that returns how many of the letters a, e, i, o, u (either case) s holds.",
     "tests": ["assert count_vowels('Hello World') == 3", "assert count_vowels('xyz') == 0", "assert count_vowels('AEIOU') == 5"],
     "solution": "def count_vowels(s):\n    return sum(1 for c in s.lower() if c in 'aeiou')\n"},
    {"type": "list", "entry_point": "dedupe", "prompt": "Write dedupe(xs) that returns xs without repeated items, keeping each item's first place.",
     "tests": ["assert dedupe([3, 1, 3, 2, 1]) == [3, 1, 2]", "assert dedupe([]) == []", "assert dedupe(['a', 'a']) == ['a']"],
     "solution": "def dedupe(xs):\n    return list(dict.fromkeys(xs))\n"},
    {"type": "list", "entry_point": "flatten", "prompt": "Write flatten(xs) that flattens a list of lists, at any depth, into one list.",
     "tests": ["assert flatten([1, [2, [3, 4]], 5]) == [1, 2, 3, 4, 5]", "assert flatten([]) == []", "assert flatten([[[]]]) == []"],
     "solution": "def flatten(xs):\n    out = []\n    for x in xs:\n        out.extend(flatten(x) if isinstance(x, list) else [x])\n    return out\n"},
    {"type": "list", "entry_point": "second_largest", "prompt": "Write second_largest(xs) that returns the second largest distinct value of xs, or None when there is none.",
     "tests": ["assert second_largest([4, 1, 4, 3]) == 3", "assert second_largest([5]) is None", "assert second_largest([2, 2]) is None"],
     "solution": "def second_largest(xs):\n    values = sorted(set(xs), reverse=True)\n    return values[1] if len(values) > 1 else None\n"},
    {"type": "math", "entry_point": "is_prime", "prompt": "Write is_prime(n) that says whether the integer n is a prime number.",
     "tests": ["assert is_prime(2) and is_prime(97)", "assert not is_prime(1) and not is_prime(0) and not is_prime(91)", "assert not is_prime(-7)"],
     "solution": "def is_prime(n):\n    if n < 2:\n        return False\n    i = 2\n    while i * i <= n:\n        if n % i == 0:\n            return False\n        i += 1\n    return True\n"},
    {"type": "math", "entry_point": "gcd", "prompt": "Write gcd(a, b) that returns the greatest common divisor of two non-negative integers (gcd(0, 0) is 0).",
     "tests": ["assert gcd(12, 18) == 6", "assert gcd(0, 5) == 5", "assert gcd(0, 0) == 0", "assert gcd(17, 4) == 1"],
     "solution": "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"},
    {"type": "math", "entry_point": "digit_sum", "prompt": "Write digit_sum(n) that returns the sum of the decimal digits of the integer n (of its absolute value).",
     "tests": ["assert digit_sum(1234) == 10", "assert digit_sum(0) == 0", "assert digit_sum(-56) == 11"],
     "solution": "def digit_sum(n):\n    return sum(int(d) for d in str(abs(n)))\n"},
    {"type": "logic", "entry_point": "fizzbuzz", "prompt": "Write fizzbuzz(n) that returns 'FizzBuzz' when n is divisible by 15, 'Fizz' by 3, 'Buzz' by 5, else str(n).",
     "tests": ["assert fizzbuzz(15) == 'FizzBuzz'", "assert fizzbuzz(9) == 'Fizz'", "assert fizzbuzz(10) == 'Buzz'", "assert fizzbuzz(7) == '7'"],
     "solution": "def fizzbuzz(n):\n    if n % 15 == 0:\n        return 'FizzBuzz'\n    if n % 3 == 0:\n        return 'Fizz'\n    if n % 5 == 0:\n        return 'Buzz'\n    return str(n)\n"},
    {"type": "logic", "entry_point": "balanced", "prompt": "Write balanced(s) that says whether the brackets (), [] and {} in s are balanced and properly nested.",
     "tests": ["assert balanced('([]{})')", "assert not balanced('([)]')", "assert balanced('a(b)c')", "assert not balanced('((')"],
     "solution": "def balanced(s):\n    pairs = {')': '(', ']': '[', '}': '{'}\n    stack = []\n    for c in s:\n        if c in '([{':\n            stack.append(c)\n        elif c in pairs:\n            if not stack or stack.pop() != pairs[c]:\n                return False\n    return not stack\n"},
    {"type": "logic", "entry_point": "leap_year", "prompt": "Write leap_year(y) that says whether y is a leap year in the Gregorian calendar.",
     "tests": ["assert leap_year(2024) and leap_year(2000)", "assert not leap_year(1900)", "assert not leap_year(2023)"],
     "solution": "def leap_year(y):\n    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)\n"},
]  # fmt: skip

UNITS = [("km", "m", 1000), ("m", "cm", 100), ("kg", "g", 1000), ("hours", "minutes", 60), ("minutes", "seconds", 60),
         ("litres", "millilitres", 1000), ("feet", "inches", 12), ("days", "hours", 24)]  # fmt: skip


def arithmetic(rng: random.Random, n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        a, b = rng.randint(2, 99), rng.randint(2, 99)
        op = rng.choice(["+", "-", "*"])
        value = a + b if op == "+" else a - b if op == "-" else a * b
        out.append({"id": f"arith-{i + 1}", "type": "arithmetic", "question": f"What is {a} {op} {b}?",
                    "answer": str(value), "scoring": "exact"})  # fmt: skip
    return out


def units(rng: random.Random, n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        big, small, factor = rng.choice(UNITS)
        amount = rng.randint(2, 40)
        out.append({"id": f"unit-{i + 1}", "type": "units", "question": f"How many {small} are in {amount} {big}?",
                    "answer": amount * factor, "scoring": "numeric"})  # fmt: skip
    return out


def code() -> list[dict[str, Any]]:
    return [{"id": f"code-{t['entry_point']}", "check": "code", **t} for t in CODE]


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    made.add_argument("--seed", type=int, default=7)
    made.add_argument("--out", type=Path, required=True, help="the folder to write the streams to")
    return made


def main() -> None:
    args = parser().parse_args()
    rng = random.Random(args.seed)
    streams = {"arithmetic": arithmetic(rng, 40), "units": units(rng, 40), "code": code()}
    mixed = [t for s in streams.values() for t in s]
    rng.shuffle(mixed)
    streams["mixed"] = mixed
    args.out.mkdir(parents=True, exist_ok=True)
    for name, tasks in streams.items():
        path = args.out / f"{name}.jsonl"
        path.write_text("".join(json.dumps(t, sort_keys=True) + "\n" for t in tasks), encoding="utf-8")
        print(f"wrote {path} ({len(tasks)} tasks)")


if __name__ == "__main__":
    main()
