"""What whole texts cost: prompt tokens of a default session on each shipped example,
against a local OpenAI-compatible endpoint that answers like a strong model (answers of
200-300 words in paragraphs; tests/support/strong_fake.py) and counts every request's tokens
with tiktoken's cl100k_base.

    .venv/bin/python scripts/prompt_tokens.py [--python CMD] [--json] [EXAMPLE ...]

`--python` runs another checkout's CLI (e.g. `--python "env PYTHONPATH=/path/to/old
python"`), so two versions can be measured the same way. Only the endpoint is faked:
sessions run through `dagmca run --llm openai` as a user's would.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagmca.llm.tokens import TokenCounter
from dagmca.prompts.templates import JUDGE_SYSTEM
from tests.support.fault_server import FaultServer
from tests.support.strong_fake import answer

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.txt"))


def measure(example: Path, python: list[str]) -> dict[str, Any]:
    counter = TokenCounter()
    prompts: list[int] = []
    judged: list[int] = []  # the judge's requests (merges, relations, stub revisits)

    def count(body: dict[str, Any]) -> None:
        prompts.append(counter.count_messages(body["messages"]))
        if body["messages"][0]["content"] == JUDGE_SYSTEM:
            judged.append(prompts[-1])

    def reply(body: dict[str, Any]) -> str:
        return answer(hashlib.sha256(json.dumps(body["messages"]).encode()).hexdigest())

    with tempfile.TemporaryDirectory() as tmp, FaultServer(text_reply=reply, on_request=count) as server:
        argv = [*python, "-m", "dagmca", "run", str(example), "--llm", "openai", "--model", "fault-model"]
        argv += ["--base-url", server.base_url, "--session", "tokens", "-q"]
        env = {"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": "sk-measure", "HOME": tmp}
        proc = subprocess.run(argv, cwd=tmp, capture_output=True, text=True, env=env, timeout=1800)
        if proc.returncode != 0:
            raise SystemExit(f"{example.name}: {proc.stderr[-500:]}")
    return {
        "example": example.name,
        "words": len(example.read_text(encoding="utf-8").split()),
        "requests": len(prompts),
        "prompt_tokens": sum(prompts),
        "largest_prompt": max(prompts),
        "judge_requests": len(judged),
        "judge_prompt_tokens": sum(judged),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("examples", nargs="*", type=Path, default=EXAMPLES)
    parser.add_argument("--python", default=sys.executable, help="the interpreter (and prefix) to run dagmca")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [measure(e, shlex.split(args.python)) for e in args.examples]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    head = f"{'example':26} {'words':>6} {'requests':>9} {'prompt tokens':>14} {'largest prompt':>15}"
    print(f"{head} {'judge requests':>15} {'judge tokens':>13}")
    for r in rows:
        print(
            f"{r['example']:26} {r['words']:>6} {r['requests']:>9} {r['prompt_tokens']:>14,} "
            f"{r['largest_prompt']:>15,} {r['judge_requests']:>15} {r['judge_prompt_tokens']:>13,}"
        )


if __name__ == "__main__":
    main()
