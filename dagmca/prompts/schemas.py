"""Output schemas of structured calls. Strings are length-capped and numbers clamped,
because grammar-constrained small models neither stop nor respect bounds."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from dagmca.llm.base import Text, Unit
from dagmca.models import TensionCategory


class TensionFlag(BaseModel):
    """An observer's verdict on one turn."""

    model_config = ConfigDict(extra="forbid")
    has_tension: bool
    question: Text(240)  # type: ignore[valid-type]
    urgency: Unit
    rationale: Text(300)  # type: ignore[valid-type]
    excerpt: Text(200)  # type: ignore[valid-type]
    category: TensionCategory
