"""The emergence ledger: every claim of a final answer (and with --ledger all, of every
synthesis and debate resolution) traced by judgment to the passage and the earlier
texts that state it or its parts, a claim none of them states checked for entailment,
and each given an origin: passage, single, recombined, emergent, integrator, inferred
or unsupported (origin.py says how they differ); and its control, a lone agent's
answer traced against a debate's sources the same way (control.py)."""

from __future__ import annotations

from dagmca.debate.ledger.control import ControlTrace, trace_control
from dagmca.debate.ledger.trace import LedgerResult, trace

__all__ = ["ControlTrace", "LedgerResult", "trace", "trace_control"]
