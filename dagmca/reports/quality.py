"""How readable a session's text is, from its exported nodes: the share of looping turns,
syntheses, integrations and final answers, and the tension questions that echo the
observers' own instructions (`scripts/quality_report.py` prints it).

A text loops when some 4-word sequence occurs 3 times or more in it: the strict measure
a reader notices (the run's guard fires on less, see `dagmca.llm.degenerate`)."""

from __future__ import annotations

from typing import Any

from dagmca.llm.degenerate import echo_reason, is_looping
from dagmca.prompts.templates import MAIN_QUESTION, observer_scaffolding


def report(nodes: list[dict[str, Any]]) -> dict[str, Any]:
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for n in nodes:
        by_kind.setdefault(str(n.get("kind", "")), []).append(n)
    questions = {n["id"]: str(n.get("question", "")) for n in by_kind.get("Debate", [])}

    def looping(kind: str, field: str) -> dict[str, Any]:
        items = by_kind.get(kind, [])
        loops = [n["id"] for n in items if is_looping(str(n.get(field, "")))]
        marked = sum(bool(n.get("degenerate")) for n in items)
        share = len(loops) / len(items) if items else 0.0
        return {
            "count": len(items),
            "looping": len(loops),
            "share": round(share, 3),
            "marked_degenerate": marked,
            "looping_ids": loops,
        }

    tensions = by_kind.get("Tension", [])
    echoing = []
    instructions = observer_scaffolding("")
    asked = {t["id"]: str(t.get("question", "")) for t in tensions}
    for t in tensions:
        question = questions.get(str(t.get("debate", "")), MAIN_QUESTION)
        # a branch's flag in its own question's words is the judge's call (kept with its
        # reason, or a duplicate of the tension the branch explores, which asks the
        # branch's question): an echo only of the instructions
        restated = t.get("status") == "duplicate" and asked.get(str(t.get("duplicate_of"))) == question
        judged = bool(t.get("kept_reason")) or restated
        reason = echo_reason(
            str(t.get("question", "")), instructions if judged else observer_scaffolding(question)
        )
        if reason:
            echoing.append({"id": t["id"], "question": t.get("question", ""), "reason": reason})
    return {
        "turns": looping("Turn", "text"),
        "syntheses": looping("Synthesis", "resolution"),
        "integrations": looping("Integration", "text"),
        "finals": looping("Final", "text"),
        "tensions": {"count": len(tensions), "echoing": len(echoing), "echoing_questions": echoing},
    }


def show(r: dict[str, Any]) -> str:
    lines = []
    for key in ("turns", "syntheses", "integrations", "finals"):
        part = r[key]
        if part["count"]:
            lines.append(
                f"{key:<13} {part['looping']:>3} of {part['count']:>3} loop ({part['share']:.0%})"
                f"   marked degenerate by the run: {part['marked_degenerate']}"
            )
    t = r["tensions"]
    lines.append(f"{'tensions':<13} {t['echoing']:>3} of {t['count']:>3} questions echo the prompt")
    lines += [f"  echo: {e['question']!r} ({e['reason']})" for e in t["echoing_questions"]]
    return "\n".join(lines)
