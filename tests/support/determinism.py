"""A responder that answers each call from its content alone (`pure`), and a stored session
in a form that does not depend on the order calls finished in (`relative`)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from dagmca.llm.fake import ScriptedCall
from dagmca.prompts.schemas import DuplicateVerdict, PairVerdict, StubVerdict
from dagmca.store.base import GraphStore
from tests.support.judges import pair_texts
from tests.support.sessions import QUESTIONS, excerpt_of, flag, no_flag


def pure(call: ScriptedCall) -> Any:
    """Replies that depend only on the prompt (the scripted helper pops flags in call
    order, which is itself latency-dependent)."""
    h = hashlib.sha256(call.prompt.encode()).digest()
    if call.schema is PairVerdict:
        a, b = pair_texts(call.prompt)
        verdict = "converge" if a == b else ("contradict", "elaborate", "unrelated")[h[0] % 3]
        return {"verdict": verdict, "shared_claim": "c", "reason": f"the texts {verdict} here"}
    if call.schema is StubVerdict:
        # a text with the answering sentence answers (quoting it); another is judged
        # answered (quoting an invented sentence: no answer), relevant or open
        answers = "Yes, some shops would." in call.prompt
        verdict = "answered" if answers else ("answered", "relevant", "open")[h[0] % 3]
        sentence = "Yes, some shops would." if answers else "Invented."
        return {"verdict": verdict, "answering_sentence": sentence, "reason": f"the text leaves it {verdict}"}
    if call.schema is DuplicateVerdict:  # both verdicts, so merges happen under every latency order
        verdict = ("duplicate", "distinct")[h[0] % 2]
        return {"verdict": verdict, "reason": f"the questions are {verdict}"}
    if call.schema is not None:
        # each lens its own flag, each flag its own case (or they would all be duplicates,
        # merged across the session)
        h = hashlib.sha256((call.prompt + call.meta.agent).encode()).digest()
        if h[0] % 3 == 0:
            return no_flag()
        category = ("gap", "assumption", "contradiction")[h[2] % 3]
        question = QUESTIONS[h[1] % len(QUESTIONS)] + f" (case {h.hex()[:6]} {h.hex()[6:12]})"
        return flag(question, 0.4 + h[4] / 500, category, excerpt=excerpt_of(call))
    if any(f"Question under debate: {QUESTIONS[k]}" in call.prompt for k in (0, 1, 4)):
        return "Pricing works when revenue funds buses and exemptions protect workers."
    if "Question under debate: " + QUESTIONS[2] in call.prompt:
        return "Would shops in the centre lose suburban visitors? Yes, some shops would."
    # Mostly words of the questions (turns then echo each other: references), with two
    # hex words so independent turns stay apart (the merge baseline).
    return f"{call.meta.agent} on {call.meta.phase}: " + " ".join(
        [QUESTIONS[b % 5].split()[b % 3] for b in h[:8]] + [h.hex()[:6], h.hex()[6:12]]
    )


def without_time(props: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in props.items() if k != "at"}


def relative(store: GraphStore, session: str) -> tuple[list[str], list[str]]:
    """The session's nodes and edges with the session id cut out of ids, minus times."""

    def rel(text: str) -> str:
        return text.replace(session, "S")

    nodes = []
    for n in store.nodes(session):
        props = {k: v for k, v in n.props.items() if k not in {"started_at", "finished_at", "revisit_checks"}}
        checks = json.loads(str(n.props.get("revisit_checks", "[]")))
        props["checks"] = [(rel(c["after"]), c["similarity"], c["outcome"]) for c in checks]
        if n.kind.value == "Session":
            props = {"title": props["title"]}
        nodes.append(rel(f"{n.id} {n.kind.value} {n.labels} {json.dumps(props, sort_keys=True)}"))
    edges = [
        rel(f"{e.source} {e.type.value} {e.target} {json.dumps(without_time(e.props), sort_keys=True)}")
        for e in store.edges(session)
    ]
    return sorted(nodes), sorted(edges)
