"""A large configuration against a local fake endpoint with a fixed latency: what it
costs and how busy it keeps the endpoint (issue "Scale").

    .venv/bin/python scripts/bench_scale.py [--latency 0.2] [--spread 0] [--concurrency|--slots 16]
        [--code CHECKOUT]
        [--passage tests/data/street_trees.txt] [--reply-words 14] [--default] [--repeat 1]
        [--json] [--keep DIR] [--profile FILE] [-- more run options]

The configuration: --cpp 3 --depth 3 --rounds 3 --max-branches 3 --max-depth 2 (with --default,
none: a default session), on a 1,300-word passage. The fake (tests/support/fault_server.py)
answers every request after the latency, with schema-valid word salad (with --reply-words N, a
plain reply is N words drawn from the passage's own vocabulary, by a hash of the request); with
--spread S, every call waits up to S more, by a hash of its messages (calls of different
lengths, as a real model's; siblings then finish apart). Printed (medians over the repeats):
calls by phase and the observers' share, the calls that judging pairs in both orders and the
ledger's entailment checks add (and their share of all), prompt tokens, the projection `dagmca
estimate` gave before the run, wall time against calls x latency / concurrency (the time 16 busy
slots would need), and dagmca's own CPU per call: the run's process, all threads (the embedding
model's included), and its event loop's thread alone (sampled every 0.05 s), that thread's also
split in three: before the first request reached the fake (start-up: imports, the pre-flight),
from the first request to the last (per call: what the calls cost), and after the last (the
reports). Also: the longest idle stretch (no request in flight between the first request and the
last reply: the session had work left but asked nothing), the event loop's embed-wait by phase
(from `dagmca metrics`), the texts embedded and the cache's hits, and the process's peak RSS.
And what bounds the wall time: the critical path (the longest chain of dependent calls, from the
store's call records: a debate's calls in a row, after its parent's), times the latency, against
the busy-slot time; the wall time over the larger of the two; and, from the fake's own log, the
mean number of busy slots between the first request and the last reply and the slot-time left
unused. The other threads' CPU, largest first (with `--profile`, by thread name). `--keep DIR`
copies each run's store there; `--profile FILE` runs the session's main thread under cProfile;
`--otel-parts` traces the run and adds the CPU of tracing's own parts (scripts/otel_parts.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# beside this script
from scale_analysis import critical_path, extra_calls, longest_idle, occupancy  # noqa: E402

from tests.support.fault_server import FaultServer, request_key  # noqa: E402

PARTS = ("parts_s", "counts", "hooks_s", "gc_s")  # what scripts/otel_parts.py writes
CONFIG = ["--cpp", "3", "--depth", "3", "--rounds", "3", "--max-branches", "3", "--max-depth", "2"]


# dagmca's entry point under cProfile; the CLI leaves by os._exit, which writes nothing,
# so the profile is written just before it
PROFILED = """
import cProfile, json, os, sys, threading, time
out = sys.argv.pop(1)
profiler = cProfile.Profile()
names = {}
def watch():  # the threads' names by their system ids, for the CPU by thread
    while True:
        names.update({t.native_id: t.name for t in threading.enumerate()})
        time.sleep(0.2)
threading.Thread(target=watch, name="bench-watch", daemon=True).start()
leave = os._exit
def dump_then_leave(code):
    profiler.disable()
    profiler.dump_stats(out)
    with open(out + ".threads.json", "w") as f:
        json.dump(names, f)
    leave(code)
os._exit = dump_then_leave
sys.argv[0] = "dagmca"
from dagmca.cli.app import entry
profiler.enable()
entry()
"""

TICKS = os.sysconf("SC_CLK_TCK")


def thread_cpu(pid: int, tid: int | None = None) -> float | None:
    """CPU seconds (user + system) of one thread of a live process (Linux), by default
    its main thread; None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/task/{tid or pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def task_ids(pid: int) -> list[int]:
    """The ids of a live process's threads (Linux); none once it is gone."""
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def thread_names(args: argparse.Namespace, threads: dict[int, float]) -> dict[str, float]:
    """With --profile: each thread's CPU seconds by its Python name (threads of one name
    summed); empty without."""
    try:
        names = json.loads(Path(f"{Path(args.profile).resolve()}.threads.json").read_text())
    except (OSError, TypeError):
        return {}
    named: dict[str, float] = {}
    for tid, cpu in threads.items():
        name = names.get(str(tid), "?")
        named[name] = round(named.get(name, 0.0) + cpu, 2)
    return dict(sorted(named.items(), key=lambda kv: -kv[1]))


class Replies:
    """Plain replies of `size` words from `passage`'s vocabulary, the same for the same
    request; and each chat request's (start, end) as the fake served it."""

    def __init__(self, passage: str, size: int) -> None:
        self.vocabulary = sorted({w.strip(".,;:!?\"'()").lower() for w in passage.split()} - {""})
        self.size = size
        self.spans: list[tuple[float, float]] = []
        self.server: FaultServer | None = None

    def reply(self, body: dict[str, Any]) -> str:
        rng = random.Random(request_key(body))
        return " ".join(rng.choice(self.vocabulary) for _ in range(self.size)).capitalize() + "."

    def arrived(self, body: dict[str, Any]) -> None:
        # the fake sleeps exactly its latency (+ the spread) before it replies
        assert self.server is not None
        now = time.monotonic()
        self.spans.append((now, now + self.server.latency_s + self.server.spread(body)))


def embed_stats(con: sqlite3.Connection) -> dict[str, Any]:
    """The session's embedding counts and embed-wait by phase, as `dagmca metrics` shows
    them, from its Session node (empty where this dagmca does not record them)."""
    [(props,)] = con.execute("SELECT props FROM nodes WHERE kind = 'Session'").fetchall()
    found = json.loads(props).get("embedding")
    return json.loads(found) if isinstance(found, str) else {}


def graph_digest(con: sqlite3.Connection) -> str:
    """The graph's shape: node ids and kinds, edges, and each tension's status (the same
    digest, the same graph for this purpose)."""
    nodes = sorted(con.execute("SELECT id, kind, props FROM nodes"))
    shape = [(i, k, json.loads(p).get("status")) for i, k, p in nodes]
    edges = sorted(con.execute("SELECT source, target, type, key FROM edges"))
    [(session,)] = con.execute("SELECT id FROM nodes WHERE kind = 'Session'").fetchall()
    text = json.dumps([shape, edges]).replace(session, "S")  # ids start with the run's own id
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def once(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    replies = Replies(Path(args.passage).read_text(), args.reply_words)
    fake = FaultServer(
        latency_s=args.latency,
        latency_spread_s=args.spread,
        text_reply=replies.reply if args.reply_words else None,
        on_request=replies.arrived,
    )
    replies.server = fake
    with fake as server:
        options = ["--llm", "openai", "--model", "fault-model", "--base-url", server.base_url]
        options += ["--concurrency", str(args.concurrency), *([] if args.default else CONFIG), *args.extra]
        options += ["--otel"] if args.otel_parts and "--otel" not in options else []
        env = {"OPENAI_API_KEY": "sk-bench", "PATH": ""}
        # the dagmca the script sits in, or --code's (a paired run against another copy of
        # the code: scripts/bench_wire.py), and the embedder asked for, if any
        env["PYTHONPATH"] = str(Path(args.code).resolve())
        env |= {k: v for k, v in os.environ.items() if k == "DAGMCA_EMBEDDER"}
        dagmca = [sys.executable, "-m", "dagmca"]
        if args.profile:  # the run's main thread (its event loop) under cProfile
            dagmca = [sys.executable, "-c", PROFILED, str(Path(args.profile).resolve())]
        elif args.otel_parts:  # traced, with the CPU of tracing's own code accounted
            dagmca = [sys.executable, str(ROOT / "scripts" / "otel_parts.py"), str(tmp / "parts.json")]
        projected = subprocess.run(
            [sys.executable, "-m", "dagmca", "estimate", args.passage, *options, "--json"],
            capture_output=True,
            text=True,
            env=env,
        )
        projection = json.loads(projected.stdout)
        store = tmp / "graph.db"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        log = tmp / "stderr.txt"
        with log.open("w") as err:
            proc = subprocess.Popen(
                [*dagmca, "run", args.passage, "--store", str(store), "--quiet", *options],
                stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=tmp,
            )  # fmt: skip
            loop_cpu = 0.0
            # the loop's CPU when the first request arrived and when the last one did: the
            # time between is what the calls cost; before is start-up, after is the reports
            first: float | None = None
            first_at: float | None = None
            last, seen = 0.0, 0
            threads: dict[int, float] = {}  # every thread's CPU as last seen, by thread id
            while proc.poll() is None:  # the event loop's thread: the process's main thread
                loop_cpu = thread_cpu(proc.pid) or loop_cpu
                threads |= {tid: cpu for tid in task_ids(proc.pid) if (cpu := thread_cpu(proc.pid, tid))}
                if server.requests > seen:
                    first = loop_cpu if first is None else first
                    first_at = time.monotonic() if first_at is None else first_at
                    last, seen = loop_cpu, server.requests
                time.sleep(0.05)
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(f"run failed ({proc.returncode}): {log.read_text()[-2000:]}")
    # the run's process, all its threads, start-up included
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    with sqlite3.connect(store) as con:
        records = [json.loads(r[0]) for r in con.execute("SELECT record FROM llm_calls")]
        embedding = embed_stats(con)
        digest = graph_digest(con)
    phases = Counter(r["phase"] for r in records)
    calls = len(records)
    mean_wait = server.waited_s / max(1, server.requests)  # the latency a call was given
    ideal = calls * mean_wait / args.concurrency
    path = critical_path(records)
    busy = occupancy(replies.spans, args.concurrency)
    # no scheduler beats the longer of the two: the chain, or the slots kept busy
    bound = max(path["calls"] * mean_wait, ideal)
    return {
        "calls": calls,
        "observer_share": round(phases["monitor"] / calls, 3),
        "prompt_tokens": sum(r["prompt_tokens"] for r in records),
        "projected_calls": [projection["calls"]["min"], projection["calls"]["max"]],
        "wall_s": round(wall, 2),
        "first_request_s": round((first_at or started) - started, 2),
        # from the last reply to the process's exit: the reports, the traces' last export
        "after_last_reply_s": round(wall - (max(end for _, end in replies.spans) - started), 2)
        if replies.spans
        else 0.0,
        "cpu_s": round(cpu, 3),
        # what a call took as dagmca measured it, against the latency the fake waits
        "latency_seen_s": round(statistics.median(r["latency_s"] for r in records), 3),
        "busy_slots_s": round(ideal, 1),
        "wall_over_busy": round(wall / ideal, 2),
        "cpu_ms_per_call": round(1000 * cpu / calls, 1),
        "loop_cpu_ms_per_call": round(1000 * loop_cpu / calls, 1),
        "loop_cpu_ms_per_call_in_span": round(1000 * (last - (first or 0.0)) / calls, 1),
        "loop_cpu_startup_s": round(first or 0.0, 2),
        "loop_cpu_after_s": round(loop_cpu - last, 2),
        "longest_idle_s": round(longest_idle(replies.spans), 2),
        # the other threads' CPU (seconds, largest first; sampled, so a short-lived thread
        # may be missed): the embedding thread, the store's, and the libraries' own
        "other_threads_cpu_s": sorted(
            (round(c, 2) for t, c in threads.items() if t != proc.pid), reverse=True
        )[:6],
        # with --profile, each thread's CPU by its name
        "threads_cpu_s": thread_names(args, threads),
        "critical_path_calls": path["calls"],
        "critical_path_s": round(path["calls"] * mean_wait, 1),
        "main_debate_calls_in_a_row": path["main"],
        "wall_over_bound": round(wall / bound, 2),
        "request_span_s": round(busy["span_s"], 1),
        "mean_busy_slots": round(busy["mean_busy"], 1),
        "unused_slot_s": round(busy["unused_s"], 1),
        "graph": digest,
        # the largest child yet (the estimate's process is far smaller than the run's)
        "peak_rss_mb": round(after.ru_maxrss / 1024, 1),
        "embedded": embedding.get("embedded", 0),
        "embed_hits": embedding.get("hits", 0),
        "embed_wait_s": embedding.get("wait_s", {}),
        "phases": dict(phases.most_common()),
        "extra_calls": extra_calls(records),
        **(json.loads((tmp / "parts.json").read_text()) if args.otel_parts else {}),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--spread", type=float, default=0.0, help="up to this much more latency per call")
    ap.add_argument("--concurrency", "--slots", type=int, default=16)
    ap.add_argument("--code", default=str(ROOT), help="the dagmca checkout the run uses (paired runs)")
    ap.add_argument("--passage", default=str(ROOT / "tests" / "data" / "street_trees.txt"))
    ap.add_argument("--reply-words", type=int, default=0, help="plain replies of this many words")
    ap.add_argument("--default", action="store_true", help="a default session, not the large configuration")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--profile", help="write the run's cProfile (its main thread) to this file")
    ap.add_argument("--keep", help="copy each run's store here (run-N.db), for a closer look")
    ap.add_argument("--otel-parts", action="store_true", help="traced: the CPU of tracing's parts")
    ap.add_argument("extra", nargs="*", help="more run options, after --")
    args = ap.parse_args()
    args.passage = str(Path(args.passage).resolve())  # the run's working directory is its own
    runs = []
    for r in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(once(args, Path(tmp)))
            if args.keep:
                Path(args.keep).mkdir(parents=True, exist_ok=True)
                shutil.copy(Path(tmp) / "graph.db", Path(args.keep) / f"run-{r + 1}.db")
        print(f"  repeat {r + 1}: {json.dumps(runs[-1])}", file=sys.stderr)
    keys = (
        "calls",
        "observer_share",
        "prompt_tokens",
        "wall_s",
        "first_request_s",
        "after_last_reply_s",
        "cpu_s",
        "latency_seen_s",
        "busy_slots_s",
        "wall_over_busy",
        "cpu_ms_per_call",
        "loop_cpu_ms_per_call",
        "loop_cpu_ms_per_call_in_span",
        "loop_cpu_startup_s",
        "loop_cpu_after_s",
        "longest_idle_s",
        "critical_path_calls",
        "critical_path_s",
        "main_debate_calls_in_a_row",
        "wall_over_bound",
        "request_span_s",
        "mean_busy_slots",
        "unused_slot_s",
        "peak_rss_mb",
        "embedded",
        "embed_hits",
    )
    summary = {k: statistics.median(float(x[k]) for x in runs) for k in keys}
    summary |= {
        "projected_calls": runs[0]["projected_calls"],
        "phases": runs[0]["phases"],
        "extra_calls": runs[0]["extra_calls"],
        "embed_wait_s": runs[0]["embed_wait_s"],
        "other_threads_cpu_s": runs[0]["other_threads_cpu_s"],
        "graphs": sorted({r["graph"] for r in runs}),
        "repeats": args.repeat,
        **({f"otel_{k}": runs[0][k] for k in PARTS} if args.otel_parts else {}),
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    latency = f"{args.latency}s" + (f" (+0-{args.spread}s)" if args.spread else "")
    config = [] if args.default else CONFIG
    print(f"latency {latency}, concurrency {args.concurrency}, {' '.join(config + args.extra)}")
    print(
        f"  {summary['calls']:.0f} calls (projected {summary['projected_calls'][0]:,}-"
        f"{summary['projected_calls'][1]:,}), observers {summary['observer_share']:.0%} of them, "
        f"{summary['prompt_tokens']:,.0f} prompt tokens"
    )
    print(
        f"  wall {summary['wall_s']:.1f}s vs {summary['busy_slots_s']:.1f}s of busy slots "
        f"({summary['wall_over_busy']:.2f}x); dagmca's CPU {summary['cpu_ms_per_call']:.1f} ms per call, "
        f"{summary['loop_cpu_ms_per_call']:.1f} ms of it on the event loop's thread"
    )
    print(
        f"  a call took {summary['latency_seen_s']:.3f}s (median, as dagmca measured it); "
        f"the first request went out {summary['first_request_s']:.1f}s after the process started"
    )
    print(
        f"  the event loop's thread: {summary['loop_cpu_startup_s']:.1f}s of CPU before the first "
        f"request, {summary['loop_cpu_ms_per_call_in_span']:.1f} ms per call from the first request "
        f"to the last, {summary['loop_cpu_after_s']:.1f}s after the last"
    )
    print(
        f"  longest idle stretch {summary['longest_idle_s']:.2f}s; peak RSS {summary['peak_rss_mb']:.0f} MB; "
        f"{summary['embedded']:.0f} texts embedded, {summary['embed_hits']:.0f} cache hits"
    )
    print(
        f"  critical path {summary['critical_path_calls']:.0f} calls in a row "
        f"({summary['critical_path_s']:.1f}s; the main debate's "
        f"{summary['main_debate_calls_in_a_row']:.0f}); "
        f"wall / max(critical path, busy slots) {summary['wall_over_bound']:.2f}x"
    )
    print(
        f"  from the first request to the last reply ({summary['request_span_s']:.1f}s): "
        f"{summary['mean_busy_slots']:.1f} of {args.concurrency} slots busy on average, "
        f"{summary['unused_slot_s']:.1f}s of all slots unused"
    )
    print(f"  embed-wait on the event loop by phase (s): {summary['embed_wait_s'] or 'not recorded'}")
    print(f"  calls by phase: {summary['phases']}; both orders, entailment: {summary['extra_calls']}")
    if args.otel_parts:
        print(f"  tracing's own CPU (s): {summary['otel_parts_s']}; {summary['otel_counts']}")


if __name__ == "__main__":
    main()
