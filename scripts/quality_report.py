"""How readable a session's text is: the share of looping turns, looping syntheses and
final answers, and tension questions that echo the observers' own prompt.

    python scripts/quality_report.py SESSION.json          # a `dagmca export` (json)
    python scripts/quality_report.py SESSION --store FILE  # straight from a store
    python scripts/quality_report.py SESSION.json --json

A text loops when some 4-word sequence occurs 3 times or more in it (the strict measure
a reader notices; the run's guard fires on less); a tension question echoes when it
restates the observers' instructions (the guard's own test, against the instructions
an observer is given). Nodes the run marked `degenerate` are counted too.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from dagmca.reports.quality import report, show


def _nodes(source: str, store: str | None) -> list[dict[str, Any]]:
    if store is None:
        data = json.loads(Path(source).read_text(encoding="utf-8"))
        return list(data["nodes"])
    from dagmca.export.formats import to_json
    from dagmca.store import open_store

    with open_store(store) as st:
        nodes, edges = st.nodes(source), st.edges(source)
        return list(json.loads(to_json(source, nodes, edges))["nodes"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", help="an exported session (json), or a session id with --store")
    parser.add_argument("--store", help="read the session from this store instead of an export")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    try:
        nodes = _nodes(args.source, args.store)
    except (OSError, ValueError, KeyError) as exc:
        print(f"quality_report: cannot read {args.source}: {exc}", file=sys.stderr)
        return 2
    result = report(nodes)
    print(json.dumps(result, indent=2) if args.json else show(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
