"""The emergence ledger: every claim of a final answer (and with --ledger all, of every
synthesis and debate resolution) traced by judgment to the earlier texts that state it
or its parts, and given an origin: single, recombined or emergent."""

from __future__ import annotations

from dagmca.debate.ledger.trace import LedgerResult, trace

__all__ = ["LedgerResult", "trace"]
