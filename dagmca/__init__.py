"""dagmca: a DAG of multi-agent LLM debates over a text passage.

    import dagmca
    result = dagmca.run(passage=text, llm="fake", store="graph.db")
    print(result.final.text)

`Workspace` is the async form (many sessions, one store, builds and evaluations);
`build` and `evaluate` the synchronous forms of those; `SessionConfig` holds every
setting; `dagmca.errors` the exceptions. The names are loaded on first use, so that
`import dagmca` (and the CLI's start) does not load the pipeline until it is needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from dagmca.api import (
        BuildResult,
        EvalReport,
        LedgerReport,
        RevisitResult,
        RunResult,
        Spend,
        Workspace,
        build,
        evaluate,
        run,
    )
    from dagmca.config import SessionConfig
    from dagmca.config.roles import RoleSettings
    from dagmca.errors import DagmcaError
    from dagmca.graph import ModelRole

# public name -> the module that defines it
_EXPORTS = {
    "Workspace": "dagmca.api",
    "run": "dagmca.api",
    "build": "dagmca.api",
    "evaluate": "dagmca.api",
    "BuildResult": "dagmca.api",
    "EvalReport": "dagmca.api",
    "LedgerReport": "dagmca.api",
    "RunResult": "dagmca.api",
    "RevisitResult": "dagmca.api",
    "Spend": "dagmca.api",
    "SessionConfig": "dagmca.config",
    "RoleSettings": "dagmca.config.roles",
    "ModelRole": "dagmca.graph",
    "DagmcaError": "dagmca.errors",
}

__all__ = [
    "BuildResult",
    "DagmcaError",
    "EvalReport",
    "LedgerReport",
    "ModelRole",
    "RevisitResult",
    "RoleSettings",
    "RunResult",
    "SessionConfig",
    "Spend",
    "Workspace",
    "__version__",
    "build",
    "evaluate",
    "run",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'dagmca' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # looked up once
    return value
