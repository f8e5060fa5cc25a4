#!/usr/bin/env python3
"""Failover of daemons sharing one PostgreSQL store (docs/cluster.md).

Starts a real PostgreSQL 15 server in a temporary directory (as the
`postgres` user when run as root), then --nodes daemons on it:

    chime serve --store postgresql://postgres@127.0.0.1:P/postgres \
                --lease-ttl 5s --data-dir D/node-i --jobs-dir D/jobs ...

One of them holds the store's lease and schedules; the others wait as
standbys. --jobs jobs fire every second; each attempt appends a line when
it starts and when it ends to a witness file outside the database
(tests/chaos/cluster.py: "<fire id> <node> <attempt> <fencing token>
<start> <end>"). Then, --trials times: wait until the scheduler has run
something and every other node is a standby, `kill -9` the scheduler, and
measure

  failover_s   kill -> the first attempt started by another node (the new
               holder's first run: with jobs every second, within a second
               of its takeover);

then restart the killed node (it comes back as a standby).

At the end the daemons stop, and the chaos test's checker
(tests/chaos/checker.py) reads the witness and the store:
  duplicates   attempts run more than once ((fire id, attempt) twice, or an
               at-most-once fire twice);
  silent       scheduled fires between a job's first and last claimed fire
               with no run, no missed record and no witnessed attempt: lost
               silently;
and every other check of the checker (fencing tokens in commit order, ...).

With --shards S the daemons run `chime serve --shards S` (docs/cluster.md,
"Shards"): every node schedules the jobs of the shards it holds. A trial
then waits until every node has run something, kills the nodes in turn, and
measures

  failover_s   kill -> every job the killed node ran in the seconds before
               has started an attempt on another node (its shards taken
               over by the others);

the killed node then comes back and takes its share again.

One JSON line per trial, then a summary line. Standard library only.

    python3 bench/failover_bench.py build/release/cli/chime --trials 20
    python3 bench/failover_bench.py build/release/cli/chime --trials 20 \
        --shards 64 --jobs 60
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "chaos"))
import checker  # noqa: E402  tests/chaos/checker.py
import cluster  # noqa: E402  tests/chaos/cluster.py

wait_for = cluster.wait_for


def witness_nodes(path, since=0):
    """The node of each witnessed attempt start, from line `since` on."""
    return [l[1] for l in cluster.read_witness(path)[since:] if l[5] == "-"]


def witness_starts(path, since=0):
    """(job, node) of each witnessed attempt start, from line `since` on."""
    return [(cluster.parse_fire_id(l[0])[0], l[1])
            for l in cluster.read_witness(path)[since:] if l[5] == "-"]


def sharded_trial(nodes, trial, witness):
    """Kills node trial % len(nodes) once every node runs jobs; the seconds
    until all the jobs it ran have started on other nodes."""
    count = len(cluster.read_witness(witness))
    wait_for("every node running jobs", lambda: {n.name for n in nodes} <= {
        node for _, node in witness_starts(witness, count)}, 60)
    victim = nodes[trial % len(nodes)]
    # Two seconds of its runs: every job of its shards (jobs every second).
    count = len(cluster.read_witness(witness))
    time.sleep(2)
    before = len(cluster.read_witness(witness))
    killed_at = time.monotonic()
    victim.kill()
    jobs = {job for job, node in witness_starts(witness, count)
            if node == victim.name}
    wait_for("the killed node's jobs running elsewhere", lambda: jobs <= {
        job for job, node in witness_starts(witness, before)
        if node != victim.name}, 120)
    failover = time.monotonic() - killed_at
    print(json.dumps({"trial": trial, "killed": victim.name,
                      "jobs": len(jobs), "failover_s": round(failover, 3)}),
          flush=True)
    victim.start()
    return failover


def check(pg, root):
    """The chaos test's checker on this run: duplicates, silent losses."""
    cluster.dump_store(pg.port, os.path.join(root, "store"))
    c = checker.Checker(root)
    ok = c.check()
    with open(os.path.join(root, "checker.txt"), "w") as f:
        c.report(f)
    n = c.counts
    return ok, {"witness_lines": len(cluster.read_witness(
                    os.path.join(root, "witness"))),
                "executions": n["executions"],
                "duplicates": n["duplicates"], "fires": n["fires"],
                "runs_by_state": n["runs_by_state"], "missed": n["missed"],
                "silent": n["silently_lost"],
                "problems": {k: v[:3] for k, v in c.problems.items()}}


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("chime")
    p.add_argument("--nodes", type=int, default=3)
    p.add_argument("--jobs", type=int, default=20)
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--lease-ttl", default="5s")
    p.add_argument("--shards", type=int, default=0,
                   help="chime serve --shards (default 0: one schedules)")
    p.add_argument("--keep", action="store_true", help="keep the directory")
    a = p.parse_args()
    chime = os.path.abspath(a.chime)
    root = tempfile.mkdtemp(prefix="chime-failover-")
    witness = os.path.join(root, "witness")
    os.mkdir(os.path.join(root, "jobs"))
    jobs = [dict(id=f"tick-{i}", period_s=1, delivery="at_most_once",
                 overlap="skip") for i in range(a.jobs)]
    with open(os.path.join(root, "run.json"), "w") as f:
        json.dump({"jobs": jobs, "shards": a.shards}, f)
    with open(os.path.join(root, "jobs", "jobs.yaml"), "w") as f:
        f.write("jobs:\n")
        for j in jobs:
            f.write(f"  - id: {j['id']}\n"
                    "    schedule: \"* * * * * *\"\n"
                    "    dialect: seconds\n"
                    "    shell: {command: " +
                    json.dumps(cluster.witness_body(0)) + "}\n")
    pg = cluster.Postgres(root)
    tag = f"failover-{os.getpid()}"
    nodes = [cluster.Node(chime, root, i, pg.url(), a.lease_ttl, witness,
                          tag, extra_args=["--shards", str(a.shards)])
             for i in range(a.nodes)]
    failovers = []
    try:
        nodes[0].start()
        wait_for("the first node serving",
                 lambda: nodes[0].logged("chime serving"), 60)
        for n in nodes[1:]:
            n.start()
        active = nodes[0]
        for trial in range(a.trials):
            if a.shards:
                failovers.append(sharded_trial(nodes, trial, witness))
                continue
            # Steady: the scheduler runs, every other node stands by.
            count = len(cluster.read_witness(witness))
            wait_for("the scheduler running", lambda: active.name in
                     witness_nodes(witness, count), 30)
            for n in nodes:
                if n is not active:
                    wait_for(f"{n.name} standing by",
                             lambda n=n: n.logged("standby: another node"),
                             30)
            before = len(cluster.read_witness(witness))
            killed_at = time.monotonic()
            active.kill()
            new = wait_for("another node running", lambda: next(
                (n for n in witness_nodes(witness, before)
                 if n != active.name), None), 120)
            failover = time.monotonic() - killed_at
            failovers.append(failover)
            print(json.dumps({"trial": trial, "killed": active.name,
                              "new": new,
                              "failover_s": round(failover, 3)}),
                  flush=True)
            active.start()  # back as a standby
            active = next(n for n in nodes if n.name == new)
        time.sleep(2)
    finally:
        for n in nodes:
            if n.proc is not None:
                n.stop()
        cluster.kill_tagged(tag)
    try:
        ok, result = check(pg, root)
    finally:
        pg.stop()
    failovers.sort()
    result.update({
        "trials": len(failovers), "nodes": a.nodes, "jobs": a.jobs,
        "shards": a.shards,
        "lease_ttl": a.lease_ttl,
        "failover_median_s": round(statistics.median(failovers), 3),
        "failover_max_s": round(failovers[-1], 3),
        "failover_min_s": round(failovers[0], 3),
        "loadavg": os.getloadavg()[0]})
    print(json.dumps(result), flush=True)
    if a.keep or not ok:
        print(f"kept {root}", file=sys.stderr)
    else:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
