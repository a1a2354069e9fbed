"""api.md: mkdocstrings directives for the public Python API."""

from __future__ import annotations

from .markdown import HEADER


def page_api() -> str:
    # each directive renders the object's docstring and signature; the results and the
    # settings are the API's types, the errors what it raises
    directives = [
        "::: dagmca.api.Workspace",
        # its reading methods are a base class's (dagmca.workspace.reading)
        "::: dagmca.workspace.BaseWorkspace\n    options:\n      inherited_members: true",
        "::: dagmca.api.run",
        "::: dagmca.api.build",
        "::: dagmca.api.evaluate",
        "::: dagmca.api.swarm",
        # what eval and swarm take beside the settings, as their commands' options do
        "::: dagmca.api.EvalOptions",
        "::: dagmca.api.SwarmOptions",
        "::: dagmca.api.RunResult",
        "::: dagmca.api.RevisitResult",
        "::: dagmca.api.Spend",
        "::: dagmca.api.BuildResult",
        "::: dagmca.api.LedgerReport",
        "::: dagmca.api.SwarmReport",
        "::: dagmca.config.roles.RoleSettings",
        "::: dagmca.errors",
        # a client of one's own (client=): what it implements, takes and returns
        "::: dagmca.llm.LLMClient",
        "::: dagmca.llm.Request",
        "::: dagmca.llm.Completion",
        "::: dagmca.testing.GraphStoreContract",
    ]
    return "\n".join(
        [
            HEADER,
            "# Python API reference\n",
            "Generated from the docstrings by mkdocstrings. How to use the API is in the "
            "[Python API guide](../guides/python-api.md).\n",
            *(d + "\n" for d in directives),
        ]
    )
