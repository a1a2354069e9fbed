"""A traced text split into its claims by the judge: each one self-contained, in the
text's order, at most --ledger-max-claims, none twice."""

from __future__ import annotations

from dagmca.debate.ledger.texts import Said
from dagmca.debate.ledger.verdicts import meta
from dagmca.debate.state import SessionState
from dagmca.prompts.ledger import claims_schema, split_claims
from dagmca.prompts.templates import Frame


async def split(state: SessionState, frame: Frame, target: Said) -> list[str] | None:
    """The claims of `target`; None when it could not be split (the budget is spent, or
    the call failed)."""
    cfg = state.handles.config
    if state.handles.llm.exhausted(reserve_calls=2):
        return None
    most = cfg.ledger_max_claims
    prompt = split_claims(frame, target.label, target.text, most)
    schema = claims_schema(most)
    done = await state.ask(prompt, schema=schema, max_tokens=cfg.synthesis_tokens(), meta=meta(target.node))
    if done is None:
        return None
    found = (" ".join(str(c).split()) for c in done.parsed.claims)
    return list(dict.fromkeys(c for c in found if c))[:most]
