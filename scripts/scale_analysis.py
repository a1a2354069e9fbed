"""What bounds a session's wall time, from the fake endpoint's request log and the store's
call records (scripts/bench_scale.py): the longest idle stretch, the slots' occupancy,
and the critical path."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def longest_idle(spans: list[tuple[float, float]]) -> float:
    """The longest time between the first request and the last reply with no request in
    flight."""
    longest, end = 0.0, None
    for start, stop in sorted(spans):
        if end is not None and start > end:
            longest = max(longest, start - end)
        end = stop if end is None else max(end, stop)
    return longest


# a debate's own calls (its turns and their observers), as opposed to the checks, merges
# and answers between and after debates
DEBATE_PHASES = {"respond", "monitor", "lateral", "observe", "signal", "strange_loop"}


def waves(spans: list[tuple[float, float]]) -> int:
    """How many calls in a row: each starts after the one before ended (overlapping
    calls are one wave)."""
    count, end = 0, float("-inf")
    for start, stop in sorted(spans):
        if start >= end - 1e-3:
            count, end = count + 1, stop
    return count


def critical_path(records: list[dict[str, Any]]) -> dict[str, Any]:
    """A lower bound on the longest chain of dependent calls, from the store's call
    records. A debate's calls in a row, as the main debate ran them: it runs alone at
    the start, so its count is the protocol's, not the slots' (a later debate's count,
    taken while slots were full, can only be higher). A branch follows its parent (in
    its id); a revisit follows the debate whose calls ended last before it began. Then
    the closing calls after the last debate ended: a run of checks (asked at once)
    counts one, other calls (merges, the answer, the ledger) their calls in a row."""
    spans: dict[str, list[tuple[float, float]]] = {}
    closing: list[tuple[float, float, str]] = []
    for r in records:
        stop = datetime.fromisoformat(r["at"]).timestamp()
        if r["phase"] in DEBATE_PHASES:
            spans.setdefault(r["debate"], []).append((stop - r["latency_s"], stop))
        else:
            closing.append((stop - r["latency_s"], stop, r["phase"]))
    if not spans:
        return {"calls": 0, "main": 0, "closing": 0}
    first = {d: min(s for s, _ in xs) for d, xs in spans.items()}
    last = {d: max(e for _, e in xs) for d, xs in spans.items()}
    main = min(spans, key=first.__getitem__)
    per_debate = waves(spans[main])
    chain: dict[str, int] = {}
    for debate in sorted(spans, key=first.__getitem__):
        parent = debate.rsplit("/", 1)[0]
        if parent not in spans:  # a revisit: after the debate whose commit made it
            before = [d for d in chain if last[d] <= first[debate]]
            parent = max(before, key=last.__getitem__) if before else ""
        chain[debate] = chain.get(parent, 0) + min(per_debate, waves(spans[debate]))
    end = max(last.values())
    runs: list[tuple[str, list[tuple[float, float]]]] = []
    for start, stop, phase in sorted(c for c in closing if c[0] >= end):
        if not runs or runs[-1][0] != phase:
            runs.append((phase, []))
        runs[-1][1].append((start, stop))
    tail = sum(1 if phase == "judge" else waves(run) for phase, run in runs)
    return {"calls": max(chain.values()) + tail, "main": per_debate, "closing": tail}


def occupancy(spans: list[tuple[float, float]], slots: int) -> dict[str, float]:
    """From the fake's own log: the mean number of busy slots, and the slot-time left
    unused between the first request and the last reply, in seconds of all slots
    (unused slot-seconds / slots)."""
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    busy, last, area = 0, events[0][0], 0.0
    for at, step in events:
        area += min(busy, slots) * (at - last)
        busy, last = busy + step, at
    span = events[-1][0] - events[0][0]
    return {"mean_busy": area / span, "unused_s": span - area / slots, "span_s": span}


# who asks the calls that judging in both orders and checking entailment add to a session
# (dagmca/debate/dag/judge.py SWAPPED, dagmca/debate/ledger/entail.py AGENT)
EXTRA_AGENTS = {"judge-swapped": "pairs_second_order", "ledger-entailment": "entailment_checks"}


def extra_calls(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The calls of a pair's second order and of the ledger's entailment checks, and
    their share of all the session's calls (the first order, and the verdicts, are what a
    session asked before these were added)."""
    found = {name: sum(r.get("agent") == agent for r in records) for agent, name in EXTRA_AGENTS.items()}
    total = sum(found.values())
    return {**found, "total": total, "share": round(total / max(1, len(records)), 4)}
