#!/usr/bin/env python3
"""Fires per second claimed and recorded by a cluster with shards
(docs/cluster.md, "Shards"; issue 8's target: 10,000 fires/s across 3 nodes).

Starts a real PostgreSQL 15 server in a temporary directory (tests/chaos/
cluster.py's, as the `postgres` user when run as root), then --nodes
`chime-bench cron` processes on it at once, each a node of one cluster:

    chime-bench cron --store postgres --pg-url URL --shards S --node-name nI \
        --n N --duration-s D --w0 W0 --fired-file F

Every node adds the same N jobs on `* * * * * *` and schedules those of the
shards it holds (every claim and transition fenced by its shard's lease,
written to the shared database). W0, the window's first second, is the same
for all: --warmup-s after the start, time for the nodes to register the jobs
and divide the shards. Each node writes, for each (job, second of the
window), whether it ran the attempt (one byte), and puts the histogram of its
fires' lateness in its output line (late_hist: [upper edge µs, count] per
non-empty bucket, each within 1.6% of its values); this script merges
them:

  fires        (job, second) pairs run by some node in the window
  expected     N * D
  missed       pairs run by no node
  duplicates   pairs run by more than one node
  fires_per_s  fires / D
  late_p50_ms, late_p99_ms, late_max_ms   over the nodes' attempts (a
               duplicate's too), as bucket upper edges

One JSON line per run (--runs), then a summary line with the medians.
Standard library only.

    python3 bench/cluster_bench.py build/release/bench/chime-bench \
        --nodes 3 --n 10000 --duration-s 20 --runs 3
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "chaos"))
import cluster  # noqa: E402  tests/chaos/cluster.py


def hist_quantile_ms(hist, q):
    """The q-quantile (nearest rank) of merged {upper edge µs: count}."""
    total = sum(hist.values())
    if total == 0:
        return None
    rank = max(1, min(total, math.ceil(q * total)))
    seen = 0
    for edge in sorted(hist):
        seen += hist[edge]
        if seen >= rank:
            return edge / 1000.0
    return None


def one_run(a, root, run):
    run_dir = os.path.join(root, f"run{run}")
    os.mkdir(run_dir)
    pg = cluster.Postgres(run_dir)
    try:
        w0 = int(time.time()) + a.warmup_s
        procs = []
        for i in range(a.nodes):
            fired = os.path.join(root, f"run{run}-n{i}.fired")
            cmd = [a.bench, "cron", "--store", "postgres", "--pg-url",
                   pg.url(), "--shards", str(a.shards), "--node-name",
                   f"n{i}", "--n", str(a.n), "--duration-s",
                   str(a.duration_s), "--w0", str(w0), "--fired-file", fired,
                   "--workers", str(a.workers), "--trace", str(int(a.trace)),
                   "--timeout-s", str(a.warmup_s + a.duration_s + 120)]
            log = open(os.path.join(root, f"run{run}-n{i}.log"), "w")
            procs.append((subprocess.Popen(cmd, stdout=log, stderr=log),
                          fired, log))
        lines = []
        for p, fired, log in procs:
            p.wait(timeout=a.warmup_s + a.duration_s + 180)
            log.close()
            with open(log.name) as f:
                text = f.read()
            if p.returncode != 0:
                sys.exit(f"a node failed (status {p.returncode}):\n{text}")
            lines.append(json.loads([l for l in text.splitlines()
                                     if l.startswith("{")][-1]))
        cells = a.n * a.duration_s
        ran = [0] * cells
        for _, fired, _ in procs:
            with open(fired, "rb") as f:
                data = f.read()
            for j, v in enumerate(data):
                ran[j] += v
        hist = {}
        for l in lines:
            for edge, count in l.get("late_hist", []):
                hist[edge] = hist.get(edge, 0) + count
        fires = sum(1 for r in ran if r)
        return {
            "workload": "cluster_cron", "nodes": a.nodes, "shards": a.shards,
            "n": a.n, "duration_s": a.duration_s, "fires": fires,
            "expected": cells, "missed": cells - fires,
            "duplicates": sum(r - 1 for r in ran if r > 1),
            "fires_per_s": round(fires / a.duration_s, 1),
            "late_p50_ms": hist_quantile_ms(hist, 0.50),
            "late_p99_ms": hist_quantile_ms(hist, 0.99),
            "late_max_ms": max((l.get("late_max_ms") or 0 for l in lines),
                               default=None),
            "per_node_fires": [l.get("fires") for l in lines],
            "per_node_cpu_window_s": [l.get("cpu_window_s") for l in lines],
            "lease_lost": [l.get("lease_lost") for l in lines],
        }
    finally:
        pg.stop()


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("bench", help="the chime-bench binary")
    p.add_argument("--nodes", type=int, default=3)
    p.add_argument("--shards", type=int, default=64)
    p.add_argument("--n", type=int, default=10000)
    p.add_argument("--duration-s", type=int, default=20)
    p.add_argument("--warmup-s", type=int, default=30)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--keep", action="store_true")
    p.add_argument("--trace", action="store_true",
                   help="chime-bench --trace: each node's stats every second "
                   "and slow store writes, in run<R>-n<I>.log")
    a = p.parse_args()
    root = tempfile.mkdtemp(prefix="chime-cluster-bench-")
    os.chmod(root, 0o755)
    results = []
    try:
        for run in range(a.runs):
            r = one_run(a, root, run)
            print(json.dumps(r), flush=True)
            results.append(r)
    finally:
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)
    summary = {"summary": "median of runs", "runs": len(results)}
    for k in ("fires_per_s", "missed", "duplicates", "late_p50_ms",
              "late_p99_ms", "late_max_ms"):
        values = [r[k] for r in results if r[k] is not None]
        summary[k] = statistics.median(values) if values else None
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
