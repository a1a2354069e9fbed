"""What the final answer cites: of its sentences that make a claim, how many cite a
section of the graph it was given, how many cite none (`uncited`), and how many
citations were removed for naming no section it was given. An answer that cites
nothing for a claim asks the reader to take that claim on trust (`metrics`, the run
summary, and an evaluation's arms through `citations`)."""

from __future__ import annotations

from dagmca.graph import FinalNode, Strict


class Citations(Strict):
    claims: int  # the final's sentences that make a claim (headings and labels aside)
    cited: int  # those that cite a section it was given
    uncited: int  # those that cite none (none given, or only labels that were removed)
    cited_share: float | None  # cited / claims (None: no claim)
    removed: int  # citations removed: labels that named no section it was given
    uncited_claims: list[str]  # the uncited sentences, in the text's order


def citations(final: FinalNode | None) -> Citations | None:
    """The final's citation counts; None without a final, or for one integrated before
    they were counted."""
    if final is None or final.claims is None or final.uncited is None:
        return None
    uncited = len(final.uncited)
    cited = final.claims - uncited
    return Citations(
        claims=final.claims,
        cited=cited,
        uncited=uncited,
        cited_share=round(cited / final.claims, 4) if final.claims else None,
        removed=len(final.removed_citations),
        uncited_claims=list(final.uncited),
    )
