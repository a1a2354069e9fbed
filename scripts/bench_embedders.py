"""Each selectable embedder, measured in a process of its own: load time, encode throughput
(batch 1 and batch 16) on realistic debate texts, CPU per text, peak RSS, and the
prefilters' recall and precision on the labelled sets of the calibration scripts.

    .venv/bin/python scripts/bench_embedders.py [--embedders minilm,minilm-onnx,...]
        [--texts 96] [--threads 1] [--json]

The texts are 60-150-word windows of the shipped essays (tests/data/*.txt), each a
different window, so no encode is a cache hit. Every embedder runs in a fresh
interpreter (`--one NAME`), so its load time and peak RSS are its own. The derived
models (ONNX graphs, the static model) are made first when absent, outside the timing.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from dagmca.config import SessionConfig  # noqa: E402
from dagmca.similarity.choose import EmbedderName, make_embedder, prepare  # noqa: E402


def texts(n: int) -> list[str]:
    """`n` distinct 60-150-word windows of the shipped essays."""
    words: list[str] = []
    for path in sorted((ROOT / "tests" / "data").glob("*.txt")):
        words += path.read_text(encoding="utf-8").split()
    out, start = [], 0
    for i in range(n):
        size = 60 + (i * 37) % 91
        if start + size > len(words):
            start = i % 7  # wrap with another offset: still a new window
        out.append(" ".join(words[start : start + size]))
        start += size // 2
    return out


def rates(pairs: list[tuple[bool, float]], threshold: float) -> tuple[float, float]:
    """Recall and precision of `cosine >= threshold` over (positive, cosine) pairs."""
    positives = [s for p, s in pairs if p]
    passed = [p for p, s in pairs if s >= threshold]
    recall = sum(s >= threshold for s in positives) / len(positives)
    return recall, (sum(passed) / len(passed) if passed else 1.0)


def labelled(name: str) -> dict[str, tuple[float, float, float]]:
    """Recall and precision of each shipped prefilter, on each labelled set."""
    import calibrate_duplicates
    import calibrate_judge
    import calibrate_ledger

    cfg = SessionConfig()
    judge = calibrate_judge.similarities(name)
    out = {}
    for task, threshold in (("pair", cfg.pair_prefilter), ("stub", cfg.stub_prefilter)):
        pos = calibrate_judge.POSITIVE[task]
        pairs = [(label in pos, s) for t, label, s in judge if t == task]
        out[f"judge {task} ≥ {threshold}"] = (threshold, *rates(pairs, threshold))
    dup = [(label == "same", s) for label, s in calibrate_duplicates.similarities(name)]
    out[f"duplicates ≥ {cfg.duplicate_prefilter}"] = (
        cfg.duplicate_prefilter,
        *rates(dup, cfg.duplicate_prefilter),
    )
    ledger = [(label in calibrate_ledger.POSITIVE, s) for label, _, s in calibrate_ledger.similarities(name)]
    out[f"ledger ≥ {cfg.ledger_prefilter}"] = (cfg.ledger_prefilter, *rates(ledger, cfg.ledger_prefilter))
    return out


def one(name: str, n: int, threads: int) -> dict[str, object]:
    """Measure the embedder `name` in this process."""
    sample = texts(n * 2 + 2)
    embedder = make_embedder(name)
    cpu, wall = time.process_time(), time.perf_counter()
    embedder.embed(sample[:1])  # the load, and one short encode
    load = time.perf_counter() - wall
    if name == EmbedderName.MINILM.value and threads != 1:
        import torch

        torch.set_num_threads(threads)  # the embedder set one thread while loading
    result: dict[str, object] = {"embedder": name, "load_s": round(load, 2)}
    for batch, chunk in ((1, sample[1 : n + 1]), (16, sample[n + 1 : 2 * n + 1])):
        cpu, wall = time.process_time(), time.perf_counter()
        for start in range(0, len(chunk), batch):
            embedder.embed(chunk[start : start + batch])
        wall = time.perf_counter() - wall
        result[f"batch{batch}_texts_per_s"] = round(len(chunk) / wall, 1)
        result[f"batch{batch}_cpu_ms_per_text"] = round((time.process_time() - cpu) * 1000 / len(chunk), 2)
    result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    embedder.close()
    result["labelled"] = labelled(name)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--embedders", default=",".join(e.value for e in EmbedderName))
    parser.add_argument("--texts", type=int, default=96, help="texts encoded at each batch size")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (minilm)")
    parser.add_argument("--json", action="store_true", help="one JSON object per embedder")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.texts, args.threads)))
        return
    rows = []
    for name in args.embedders.split(","):
        prepare([name])  # derive the model now, outside the measured process
        cmd = [
            sys.executable,
            __file__,
            "--one",
            name,
            "--texts",
            str(args.texts),
            "--threads",
            str(args.threads),
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        if args.json:
            print(json.dumps(rows[-1]))
    if args.json:
        return
    print("| embedder | load s | texts/s b1 | texts/s b16 | CPU ms/text b1 | CPU ms/text b16 | peak RSS MB |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['embedder']} | {r['load_s']} | {r['batch1_texts_per_s']} | {r['batch16_texts_per_s']} | "
            f"{r['batch1_cpu_ms_per_text']} | {r['batch16_cpu_ms_per_text']} | {r['peak_rss_mb']} |"
        )
    print("\nprefilter recall / precision at the shipped thresholds:")
    sets = list(rows[0]["labelled"])  # type: ignore[call-overload]
    print("| embedder | " + " | ".join(sets) + " |")
    print("|---|" + "---|" * len(sets))
    for r in rows:
        found = r["labelled"]
        assert isinstance(found, dict)
        print(
            f"| {r['embedder']} | "
            + " | ".join(f"{found[s][1]:.2f} / {found[s][2]:.2f}" for s in sets)
            + " |"
        )


if __name__ == "__main__":
    main()
