"""The emergence ledger: every claim of a final answer (and with --ledger all, of every
synthesis and debate resolution) traced by judgment to the passage and the earlier
texts that state it or its parts, a claim none of them states checked for entailment,
and each given an origin: passage, single, recombined, emergent, inferred or
unsupported (origin.py says how they differ)."""

from __future__ import annotations

from dagmca.debate.ledger.trace import LedgerResult, trace

__all__ = ["LedgerResult", "trace"]
