"""Checking what the answer cites: a cited id stays only when it names a node that was
in the answer's context. Any other is removed and counted, with why: no such node, or a
node the model was not given (it may exist, but the answer cannot rest on a text its
writer never read)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from dagmca.ask.models import Citation, Hit, RemovedCitation, Statement

# what models wrap an id in when they copy it: brackets, quotes, a "Node " prefix
_WRAPPING = "[]()<>`'\" "


def clean_id(raw: str) -> str:
    text = raw.strip().strip(_WRAPPING)
    if text.lower().startswith("node "):
        text = text[5:].strip(_WRAPPING)
    return text


@dataclass(frozen=True)
class Checked:
    statements: list[Statement]
    citations: list[Citation]
    removed: list[RemovedCitation]


def unknown_ids(cited: Iterable[str], context: Sequence[str]) -> list[str]:
    """The cited ids (cleaned) that are not in the context: those whose existence the
    caller must look up to say why each is removed."""
    inside = set(context)
    return list(dict.fromkeys(c for c in map(clean_id, cited) if c and c not in inside))


def check(
    statements: Sequence[tuple[str, Sequence[str]]],
    context: Sequence[Hit],
    exists: Callable[[str], bool],
) -> Checked:
    """Each statement (text, cited ids) with only the ids of `context` nodes, each once;
    the citations in order of first citing; every other id removed once, with its reason
    (`exists` tells whether a node of that id is in the store)."""
    by_id = {h.id: h for h in context}
    kept: list[Statement] = []
    cited: dict[str, Citation] = {}
    removed: dict[str, RemovedCitation] = {}
    for text, ids in statements:
        good: list[str] = []
        for raw in ids:
            node = clean_id(raw)
            if node in by_id:
                if node not in good:
                    good.append(node)
                hit = by_id[node]
                cited.setdefault(
                    node,
                    Citation(
                        id=node,
                        kind=hit.kind,
                        session=hit.session,
                        label=hit.label,
                        recurrence=hit.recurrence,
                    ),
                )
            elif node and node not in removed:
                why = "not in the context" if exists(node) else "no such node"
                removed[node] = RemovedCitation(id=node, reason=why)
        if text.strip():
            kept.append(Statement(text=text.strip(), cites=good))
    return Checked(kept, list(cited.values()), list(removed.values()))


def answer_text(statements: Sequence[Statement]) -> str:
    """The statements, one a line, each followed by the ids it cites."""
    lines = []
    for s in statements:
        lines.append(f"{s.text} [{', '.join(s.cites)}]" if s.cites else s.text)
    return "\n".join(lines)
