"""dagmca: a DAG of multi-agent LLM debates over a text passage."""

__version__ = "0.1.0"
