"""The LLM layer: one async interface, the openai and local backends, a scripted fake."""

from dagmca.llm.base import CallMeta, Completion, LLMClient, LLMError, Message, Request, Usage
from dagmca.llm.metered import Budget, MeteredLLM
from dagmca.llm.prices import Prices

__all__ = [
    "Budget",
    "CallMeta",
    "Completion",
    "LLMClient",
    "LLMError",
    "Message",
    "MeteredLLM",
    "Prices",
    "Request",
    "Usage",
]
