"""reports.md: the models of the files a session writes, as tables and JSON Schemas."""

from __future__ import annotations

import json
import typing
from collections.abc import Iterator
from typing import Any

from .fields import field_rows
from .markdown import HEADER, paragraphs, table


def models_under(root: type, stop: set[type]) -> list[type]:
    """The models a model is made of, itself first, breadth first in field order."""
    from pydantic import BaseModel

    seen: list[type] = []
    queue = [root]
    while queue:
        model = queue.pop(0)
        if model in seen:
            continue
        seen.append(model)
        if model in stop:
            continue
        for field in model.model_fields.values():  # type: ignore[attr-defined]
            for tp in flatten_types(field.annotation):
                if isinstance(tp, type) and issubclass(tp, BaseModel) and tp not in seen and tp not in stop:
                    queue.append(tp)
    return seen


def flatten_types(tp: Any) -> Iterator[Any]:
    yield tp
    for arg in typing.get_args(tp):
        yield from flatten_types(arg)


def report_section(title: str, files: str, model: type, about: str) -> str:
    from dagmca.config import SessionConfig

    out = [f"## {title}\n", f"{files}\n", about + "\n" if about else ""]
    for part in models_under(model, {SessionConfig}):
        if part is SessionConfig:
            continue
        out.append(f"### {part.__name__}\n")
        doc = part.__dict__.get("__doc__")
        if doc:
            out.append(paragraphs(doc) + "\n")
        out.append(table(["field", "type", "default", "notes"], field_rows(part)))
    schema = json.dumps(model.model_json_schema(), indent=2, sort_keys=True, ensure_ascii=False)  # type: ignore[attr-defined]
    indented = "\n".join(("    " + line) if line else "" for line in schema.splitlines())
    out.append(f'??? note "JSON Schema of {model.__name__}"\n\n    ```json\n{indented}\n    ```\n')
    return "\n".join(out)


def page_reports() -> str:
    from dagmca.metrics.session import SessionMetrics
    from dagmca.reports import models
    from dagmca.stability.models import StabilityReport

    out = [
        HEADER,
        "# Report files\n",
        "Beside the graph, every session writes its reports to its folder (`--out`, by default "
        "`sessions/<session id>/` beside the store). The JSON files are described by strict "
        "pydantic models (unknown fields are errors), so `MCAReport.model_validate_json(text)` "
        "checks a file; the JSON Schemas below are generated from the same models. A `config` "
        "field holds the session's settings, described in the "
        "[configuration guide](../guides/configuration.md).\n",
        "The live files are not models: `status.json` (where the run is, rewritten atomically "
        "at every phase change and at most every quarter second) and `events.jsonl` (one JSON "
        "object per event, appended); `dagmca status` reads the first.\n",
    ]
    out.append(
        report_section(
            "mca_report.json",
            "`mca_report.json` (the main debate) and `debates/<id>/mca_report.json` (each branch).",
            models.MCAReport,
            "The seed's report format for one debate, extended with the second-seed options, the "
            "baseline's subtasks and the peer protocols' winner and tracker.",
        )
    )
    out.append(
        report_section(
            "final_state.json",
            "`final_state.json`",
            models.FinalState,
            "The session as it ended: its debates, syntheses, tensions, final answer and totals.",
        )
    )
    out.append(
        report_section(
            "metrics.json",
            "`metrics.json`",
            SessionMetrics,
            "The emergence metrics, as `dagmca metrics SESSION --json` prints them; see "
            "[Metrics](metrics.md).",
        )
    )
    out.append(
        report_section(
            "a study's report",
            "`dagmca stability --json` (and `Workspace.stability`, `Workspace.run_samples`); not a file.",
            StabilityReport,
            "Which findings hold across samples of one passage; see "
            "[Which findings hold](../guides/stability.md).",
        )
    )
    return "\n".join(out)
