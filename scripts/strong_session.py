"""A session a reader can read, for the documentation's pictures: the scripted stand-in
for a strong model (tests/support/strong_fake.py, whose every text is made of real
sentences about its passage) debates that passage, the four-day week, into a store.

    .venv/bin/python scripts/strong_session.py demo.db [--session demo]
    .venv/bin/dagmca export demo --store demo.db --format html -o demo.html
    .venv/bin/python scripts/viewer_screenshots.py demo.html docs/

Nothing is asked of a model and nothing is spent; the session records its model as the
scripted one, and the pages' captions say so.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dagmca
from dagmca.llm.fake import ScriptedLLM
from tests.support.strong_fake import LONG_PASSAGE, StrongModel


async def make(store: Path, session: str) -> None:
    async with dagmca.Workspace(store) as ws:
        result = await ws.run(
            LONG_PASSAGE,
            session=session,
            client=ScriptedLLM(StrongModel(), caps=True),
            llm="fake",
            title="A four-day week",
        )
    print(f"{result.session.id}: {result.session.status}, {result.spend.calls} calls, in {store}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("store", type=Path)
    parser.add_argument("--session", default="four-day-week")
    args = parser.parse_args()
    asyncio.run(make(args.store, args.session))


if __name__ == "__main__":
    main()
