#!/usr/bin/env python3
"""The REST API under 32 concurrent clients: durable job creations per
second, and the latency of a run listing page of 100.

Per run, on a fresh data directory and an empty jobs directory, starts the
real daemon (`chime serve --listen 127.0.0.1:0`), then with api_load:

  create   POST /v1/jobs of --creations new HTTP jobs by --clients clients
           (each answered 201 once the job is in the SQLite store);
  seed     one job with overlap `allow`, triggered --runs times (its runs
           fail at once: the HTTP target is a closed port);
  list     GET /v1/jobs/bench/seed/runs?limit=100 --lists times by the
           clients, and the same for the global list GET /v1/runs?limit=100,
           each after --warmup requests per client that are not measured
           (they open the connections and warm the daemon: a fresh daemon's
           first ~100 ms of listings are 2-4x slower); their p99 is reported
           as list_warmup_p99_ms.

One JSON line per run, then one line of medians over the runs. The daemon
must exit 0 on SIGTERM. Build in Release first (scripts/build.sh release):

    python3 bench/api_bench.py build/release/cli/chime \\
        build/release/bench/api_load --runs 3
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_bench import BenchError, Daemon  # noqa: E402


def load(api_load, server, mode, clients, requests, **extra):
    args = [api_load, "--server", server, "--mode", mode, "--clients",
            str(clients), "--requests", str(requests)]
    for k, v in extra.items():
        args += [f"--{k}", str(v)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=600)
    result = json.loads(out.stdout)
    if out.returncode != 0:
        raise BenchError(f"{mode}: {result['failed']} requests failed, "
                         f"{result.get('warmup_failed', 0)} in the warm-up "
                         f"({result['first_error']})")
    return result


def put(server, path, body):
    req = urllib.request.Request(server + path, data=body.encode(),
                                 method="PUT",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status


def one_run(args):
    tmp = tempfile.mkdtemp(prefix="chime-api-bench-")
    try:
        jobs_dir = os.path.join(tmp, "jobs")
        os.makedirs(jobs_dir)
        d = Daemon(args.binary, jobs_dir, os.path.join(tmp, "data"))
        try:
            _, serving = d.wait_event("chime serving", time.monotonic() + 60)
            server = "http://" + serving["listen"]
            create = load(args.api_load, server, "create", args.clients,
                          args.creations)
            put(server, "/v1/jobs/bench/seed",
                '{"schedule": "0 0 1 1 *", "overlap": "allow",'
                ' "http": {"url": "http://127.0.0.1:9/hook"}}')
            seed = load(args.api_load, server, "trigger", args.clients,
                        args.runs_per_job, job="bench/seed")
            job_list = load(args.api_load, server, "get", args.clients,
                            args.lists, warmup=args.warmup,
                            path="/v1/jobs/bench/seed/runs?limit=100")
            global_list = load(args.api_load, server, "get", args.clients,
                               args.lists, warmup=args.warmup,
                               path="/v1/runs?limit=100")
            rc, _ = d.stop(60)
            if rc != 0:
                raise BenchError(f"the daemon exited {rc}")
        finally:
            d.kill()
        return {
            "creations": create["ok"],
            "create_per_s": create["per_s"],
            "create_p50_ms": create["p50_ms"],
            "create_p99_ms": create["p99_ms"],
            "triggers_per_s": seed["per_s"],
            "list_per_s": job_list["per_s"],
            "list_p50_ms": job_list["p50_ms"],
            "list_p99_ms": job_list["p99_ms"],
            "list_warmup_p99_ms": job_list["warmup_p99_ms"],
            "global_list_p99_ms": global_list["p99_ms"],
            "loadavg": os.getloadavg()[0],
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("binary")
    p.add_argument("api_load")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--clients", type=int, default=32)
    p.add_argument("--creations", type=int, default=20000)
    p.add_argument("--runs-per-job", type=int, default=10000)
    p.add_argument("--lists", type=int, default=5000)
    p.add_argument("--warmup", type=int, default=10,
                   help="listings per client before the measured ones")
    args = p.parse_args()
    results = []
    for _ in range(args.runs):
        r = one_run(args)
        print(json.dumps(r), flush=True)
        results.append(r)
    medians = {k: statistics.median(r[k] for r in results)
               for k in results[0]}
    print(json.dumps({"median_of": len(results), **medians}))


if __name__ == "__main__":
    main()
