#!/usr/bin/env python3
"""Failover of daemons sharing one PostgreSQL store (docs/cluster.md).

Starts a real PostgreSQL 15 server in a temporary directory (as the
`postgres` user when run as root), then --nodes daemons on it:

    chime serve --store postgresql://postgres@127.0.0.1:P/postgres \
                --lease-ttl 5s --data-dir D/node-i --jobs-dir D/jobs ...

One of them holds the store's lease and schedules; the others wait as
standbys. --jobs jobs fire every second; each run appends
"<fire id> <attempt> <fencing token> <node>" to a witness file outside the
database. Then, --trials times: wait until the scheduler has run something
and every other node is a standby, `kill -9` the scheduler, and measure

  failover_s   kill -> the first witness line written by another node (the
               new holder's first run: with jobs every second, within a
               second of its takeover);

then restart the killed node (it comes back as a standby).

At the end the daemons stop, and the checker reads the witness and the
store:
  duplicates   (fire id, attempt) pairs run more than once;
  unwitnessed  scheduled fires of each job, between its first and last
               witnessed fire, with no witness line: each must have a record
               in the store -- a run (lost: running on the killed node;
               the job is at-most-once) or a missed record --
  silent       the unwitnessed fires without such a record: lost silently.

One JSON line per trial, then a summary line. Standard library only.

    python3 bench/failover_bench.py build/release/cli/chime --trials 20
"""

import argparse
import collections
import datetime
import json
import os
import pwd
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

PG_BIN = "/usr/lib/postgresql/15/bin"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, fn, limit_s):
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.02)
    raise SystemExit(f"failover_bench: waited {limit_s} s for {what}")


class Postgres:
    """A PostgreSQL server in `root`, on 127.0.0.1 only."""

    def __init__(self, root):
        self.dir = os.path.join(root, "pg")
        os.mkdir(self.dir)
        self.as_user = []
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            os.chmod(root, 0o755)
            self.as_user = ["runuser", "-u", "postgres", "--"]
        self.port = free_port()
        subprocess.run(self.as_user + [f"{PG_BIN}/initdb", "-D",
                                       f"{self.dir}/data", "-A", "trust",
                                       "-U", "postgres", "--no-sync"],
                       check=True, stdout=subprocess.DEVNULL)
        self.proc = subprocess.Popen(
            self.as_user + [f"{PG_BIN}/postgres", "-D", f"{self.dir}/data",
                            "-p", str(self.port), "-k", self.dir,
                            "-c", "listen_addresses=127.0.0.1"],
            stdout=subprocess.DEVNULL, stderr=open(f"{self.dir}/log", "w"))
        wait_for("PostgreSQL", lambda: subprocess.run(
            ["pg_isready", "-q", "-h", "127.0.0.1", "-p", str(self.port)]
        ).returncode == 0, 30)

    def url(self):
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def query(self, sql):
        out = subprocess.run(
            ["psql", "-At", "-F", "\t", "-h", "127.0.0.1", "-p",
             str(self.port), "-U", "postgres", "-d", "postgres", "-c", sql],
            check=True, capture_output=True, text=True).stdout
        return [line.split("\t") for line in out.splitlines() if line]

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Node:
    def __init__(self, chime, root, index, store_url, lease_ttl, witness):
        self.name = f"n{index}"
        self.port = free_port()
        self.args = [chime, "serve", "--store", store_url, "--lease-ttl",
                     lease_ttl, "--data-dir", os.path.join(root, self.name),
                     "--jobs-dir", os.path.join(root, "jobs"), "--listen",
                     f"127.0.0.1:{self.port}", "--log-format", "json",
                     "--node-name", self.name]
        self.env = dict(os.environ, NODE=self.name, WITNESS=witness)
        self.log_path = os.path.join(root, f"{self.name}.log")
        self.proc = None

    def start(self):
        self.log = open(self.log_path, "a")
        self.log_start = os.path.getsize(self.log_path)
        self.proc = subprocess.Popen(self.args, env=self.env,
                                     stdout=subprocess.DEVNULL,
                                     stderr=self.log)

    def logged(self, prefix):
        with open(self.log_path) as f:
            f.seek(self.log_start)
            for line in f:
                try:
                    if json.loads(line).get("msg", "").startswith(prefix):
                        return True
                except json.JSONDecodeError:
                    pass
        return False

    def kill(self):
        self.proc.kill()
        self.proc.wait()
        self.log.close()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def witness_lines(path):
    try:
        with open(path) as f:
            return [l.split() for l in f.read().splitlines()
                    if len(l.split()) == 4]
    except FileNotFoundError:
        return []


def parse_fire(fire_id):
    job, generation, when = fire_id.split(":", 2)
    t = datetime.datetime.strptime(when, "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc)
    return job, int(generation), int(t.timestamp())


def check(pg, witness):
    lines = witness_lines(witness)
    runs = collections.Counter((l[0], l[1]) for l in lines)
    duplicates = sum(n - 1 for n in runs.values() if n > 1)
    seen = collections.defaultdict(set)
    for l in lines:
        job, _, t = parse_fire(l[0])
        seen[job].add(t)
    # What the store has for each job, by scheduled second.
    ids = {name: int(i) for i, name in pg.query("SELECT id, name FROM jobs")}
    unwitnessed = 0
    accounted = collections.Counter()
    silent = []
    for job, times in seen.items():
        jid = ids[job]
        stored = {int(s) // 10**9: state for s, state in pg.query(
            f"SELECT scheduled, state FROM runs WHERE job_id = {jid} "
            "AND NOT manual")}
        missed = [(int(a) // 10**9, int(b) // 10**9) for a, b in pg.query(
            f"SELECT first, last FROM missed WHERE job_id = {jid}")]
        for t in range(min(times), max(times) + 1):
            if t in times:
                continue
            unwitnessed += 1
            if t in stored:
                accounted[f"run_state_{stored[t]}"] += 1
            elif any(a <= t <= b for a, b in missed):
                accounted["missed"] += 1
            else:
                silent.append(f"{job}@{t}")
    return {"witness_lines": len(lines), "duplicates": duplicates,
            "unwitnessed": unwitnessed, "accounted": dict(accounted),
            "silent": len(silent), "silent_examples": silent[:5]}


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("chime")
    p.add_argument("--nodes", type=int, default=3)
    p.add_argument("--jobs", type=int, default=20)
    p.add_argument("--trials", type=int, default=20)
    p.add_argument("--lease-ttl", default="5s")
    p.add_argument("--keep", action="store_true", help="keep the directory")
    a = p.parse_args()
    chime = os.path.abspath(a.chime)
    root = tempfile.mkdtemp(prefix="chime-failover-")
    witness = os.path.join(root, "witness")
    os.mkdir(os.path.join(root, "jobs"))
    with open(os.path.join(root, "jobs", "jobs.yaml"), "w") as f:
        f.write("jobs:\n")
        for i in range(a.jobs):
            f.write(f"  - id: tick-{i}\n    schedule: \"@every 1s\"\n"
                    "    shell: { command: \"echo \\\"$CHIME_FIRE_ID "
                    "$CHIME_ATTEMPT $CHIME_FENCING_TOKEN $NODE\\\" >> "
                    "$WITNESS\" }\n")
    pg = Postgres(root)
    nodes = [Node(chime, root, i, pg.url(), a.lease_ttl, witness)
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
            # Steady: the scheduler runs, every other node stands by.
            count = len(witness_lines(witness))
            wait_for("the scheduler running", lambda: any(
                l[3] == active.name
                for l in witness_lines(witness)[count:]), 30)
            for n in nodes:
                if n is not active:
                    wait_for(f"{n.name} standing by",
                             lambda n=n: n.logged("standby: another node"),
                             30)
            before = len(witness_lines(witness))
            killed_at = time.monotonic()
            active.kill()
            new = wait_for("another node running", lambda: next(
                (l[3] for l in witness_lines(witness)[before:]
                 if l[3] != active.name), None), 120)
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
    result = check(pg, witness)
    pg.stop()
    failovers.sort()
    result.update({
        "trials": len(failovers), "nodes": a.nodes, "jobs": a.jobs,
        "lease_ttl": a.lease_ttl,
        "failover_median_s": round(statistics.median(failovers), 3),
        "failover_max_s": round(failovers[-1], 3),
        "failover_min_s": round(failovers[0], 3),
        "loadavg": os.getloadavg()[0]})
    print(json.dumps(result), flush=True)
    if a.keep:
        print(f"kept {root}", file=sys.stderr)
    else:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if result["duplicates"] == 0 and result["silent"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
