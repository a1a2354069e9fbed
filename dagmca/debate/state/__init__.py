"""What one running session shares, by concern: its handles, the graph built so far, its
counts and its prompts' space (a module each), composed into `SessionState`
(`session.py`)."""

from __future__ import annotations

from dagmca.debate.state.session import Memory, SessionState

__all__ = ["Memory", "SessionState"]
