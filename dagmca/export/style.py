"""How the exports draw each kind of node: one colour per kind, stubs grey."""

from __future__ import annotations

from dagmca.graph import STUB_LABEL, NodeRecord

KIND_COLOURS = {
    "Session": "#9CA3AF",
    "Debate": "#93C5FD",
    "Round": "#DBEAFE",
    "Turn": "#F3F4F6",
    "Agent": "#C4B5FD",
    "Tension": "#FCD34D",
    STUB_LABEL: "#E5E7EB",
    "Synthesis": "#6EE7B7",
    "Final": "#FCA5A5",
    "Section": "#FEF3C7",
    "Integration": "#F87171",
    "Persona": "#A78BFA",
    "Claim": "#FDBA74",
    "Evaluation": "#0F766E",
    "JudgeCheck": "#115E59",
    "Swarm": "#155E75",
    "Task": "#BAE6FD",
    "Snapshot": "#E0F2FE",
    "Finding": "#A3E635",
}


def style_class(n: NodeRecord) -> str:
    """The key of a node's look: its kind, or Stub for an open stub."""
    return STUB_LABEL if STUB_LABEL in n.labels else n.kind.value
