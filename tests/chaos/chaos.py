#!/usr/bin/env python3
"""The chaos test of cluster mode (docs/cluster.md, "Chaos test").

Starts a real PostgreSQL 15 server and --nodes `chime serve` daemons sharing
it, each reaching the database through its own TCP proxy (tests/chaos/
proxy.py) and running with libfaketime preloaded (its wall clock can be skewed
at run time; its monotonic clock is left alone). Jobs fire every 1-5 seconds
(at-most-once and at-least-once, overlap policies that forbid overlap); each
attempt appends a line when it starts and one when it ends to a witness file
outside the database (cluster.WITNESS_BODY).

Then faults, one at a time, each healed before the next (and before it, the
cluster is given time to be steady: a node holds the lease and runs jobs):

  kill9        kill -9 of the lease holder; restarted a moment later
  leave        SIGTERM of the lease holder: it stops cleanly (its lease, or
               with shards each shard lease, released after its runs'
               outcomes are written), stays away a lease ttl, then starts
               again and joins
  sigstop      SIGSTOP of the lease holder for longer than its lease, then
               SIGCONT: the zombie must get nothing accepted (it exits with
               status 3 when it wakes) and is restarted
  pg_stop      PostgreSQL stopped with `pg_ctl stop -m immediate`, started
               again on the same port
  cut_drop     the holder's proxy drops everything (no answer, no reset) for
               longer than the lease, then heals
  cut_reset    the holder's proxy resets every connection for as long
  skew_holder  the holder's wall clock set ahead or behind (tens of seconds)
  skew_standby a standby's wall clock skewed by minutes
  skew_failover every standby's clock skewed, then the holder killed: no
               skewed node may take the lease (max_clock_skew); once the
               clocks agree again, one does

With --shards N the nodes run `chime serve --shards N` (docs/cluster.md,
"Shards"): every node schedules the jobs of its shards, "the holder" a fault
targets is the node holding the most shard leases, a "standby" any other
node, and the checker takes fencing tokens per shard.

The harness restarts every node that exits (as a service manager would), and
records every fault window (kind, node, start, end, recovered: jobs run on
time again), every node
exit and the lease's holders into RUN_DIR/run.json. At the end it stops the
nodes, dumps the store and runs tests/chaos/checker.py on the run directory.

    python3 tests/chaos/chaos.py build/release/cli/chime --minutes 30
    python3 tests/chaos/chaos.py build/test/cli/chime --short --out DIR

--short is the CI version (every kind once, about 3 minutes). The exit status
is 0 only when the checker passed and every fault was recovered from. The
run directory is removed on success unless --keep; on failure it is kept
(witness, node logs, store dump, checker.txt) and its path printed.
Standard library only.
"""

import argparse
import collections
import json
import os
import random
import signal
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checker  # noqa: E402
import cluster  # noqa: E402
import proxy  # noqa: E402

# The jobs: (id, namespace, period in seconds, delivery, overlap, seconds the
# body sleeps, misfire). A body is shorter than 2/3 of the shortest lease
# used (3 s): a frozen or killed holder's last attempts end before a
# successor can take over (the lease expires at least 2/3 ttl after the last
# renewal), so the overlap check sees chime's decisions, not a process that
# no one could stop. A holder cut off from the database kills its attempts
# at its local deadline (docs/cluster.md), so they are not excused.
JOBS = [
    ("tick1", "default", 1, "at_most_once", "skip", 1.3, None),
    ("tick2", "default", 2, "at_least_once", "skip", 0.4, None),
    ("tick3", "default", 3, "at_least_once", "buffer_one", 1.2, None),
    ("tick4", "ops", 4, "at_most_once", "buffer_all", 0.2,
     "{policy: run_all, threshold: 5s}"),
    ("tick5", "ops", 5, "at_least_once", "skip", 1.5,
     "{policy: skip, threshold: 10s}"),
]

SHORT_FAULTS = [
    ("kill9", {}),
    ("leave", {}),
    ("sigstop", {}),
    ("pg_stop", {}),
    ("cut_drop", {}),
    ("cut_reset", {}),
    ("skew_holder", {"offset": 20}),
    ("skew_holder", {"offset": -20}),
    ("skew_standby", {"offset": 150}),
    ("skew_failover", {"offset": -40}),
]

LONG_FAULTS = SHORT_FAULTS + [
    ("skew_holder", {"offset": 45}),
    ("skew_holder", {"offset": -150}),
    ("skew_holder", {"offset": 180}),
    ("skew_standby", {"offset": -300}),
    ("skew_failover", {"offset": 120}),
]


def now():
    return time.time()


class Harness:
    def __init__(self, a, root):
        self.a = a
        self.root = root
        self.ttl = float(a.lease_ttl.rstrip("s"))
        self.tag = f"chaos-{os.getpid()}-{int(now())}"
        self.rng = random.Random(a.seed)
        self.witness = os.path.join(root, "witness")
        self.events = []  # (time, what, details)
        self.faults = []
        self.problems = []
        self.exits = []
        self.leases = []  # (time, holder, epoch) at every change
        self.nodes = []
        self.proxies = []
        self.pg = None
        self.skewed_by = 0  # seconds of the last fault's clock skew
        self.shard_holders = {}  # with shards: shard lease -> node
        self.stop_polling = threading.Event()
        self.event_log = open(os.path.join(root, "events.log"), "a")

    # --- bookkeeping ------------------------------------------------------

    def event(self, what, **details):
        t = now()
        self.events.append(dict(time=t, what=what, **details))
        line = f"{cluster.utc(t)} {what} " + " ".join(
            f"{k}={v}" for k, v in details.items())
        print(line, file=self.event_log, flush=True)
        if self.a.verbose:
            print(line, flush=True)

    def problem(self, message):
        self.event("PROBLEM", message=message)
        self.problems.append(message)

    def write_run_json(self):
        jobs = [dict(id=f"{j}-{c}", namespace=ns, period_s=p, delivery=d,
                     overlap=o, sleep_s=s, misfire=m)
                for c in range(self.a.copies)
                for j, ns, p, d, o, s, m in JOBS]
        run = dict(jobs=jobs, faults=self.faults, exits=self.exits,
                   leases=self.leases, lease_ttl_s=self.ttl,
                   shards=self.a.shards,
                   nodes=[dict(name=n.name, port=n.port) for n in self.nodes],
                   problems=self.problems, seed=self.a.seed)
        with open(os.path.join(self.root, "run.json"), "w") as f:
            json.dump(run, f, indent=1)
        return jobs

    def write_jobs(self):
        jobs = self.write_run_json()
        os.mkdir(os.path.join(self.root, "jobs"))
        with open(os.path.join(self.root, "jobs", "chaos.yaml"), "w") as f:
            f.write("jobs:\n")
            for j in jobs:
                every = "*" if j["period_s"] == 1 else f"*/{j['period_s']}"
                f.write(f"  - id: {j['id']}\n"
                        f"    namespace: {j['namespace']}\n"
                        f"    schedule: \"{every} * * * * *\"\n"
                        f"    dialect: seconds\n"
                        f"    delivery: {j['delivery']}\n"
                        f"    overlap: {j['overlap']}\n")
                if j["misfire"]:
                    f.write(f"    misfire: {j['misfire']}\n")
                f.write("    shell: {command: " + json.dumps(
                    cluster.witness_body(j["sleep_s"])) + "}\n")

    # --- the cluster ------------------------------------------------------

    def start(self):
        self.write_jobs()
        self.pg = cluster.Postgres(self.root)
        self.event("postgres started", port=self.pg.port)
        for i in range(self.a.nodes):
            p = proxy.Proxy(self.pg.port)
            self.proxies.append(p)
            node = cluster.Node(
                self.a.chime, self.root, i, self.pg.url(p.port),
                self.a.lease_ttl, self.witness, self.tag,
                faketime=True,
                extra_args=["--history-keep-per-job", "0",
                            "--history-max-age", "unlimited",
                            "--shutdown-grace", "3s",
                            "--shards", str(self.a.shards)])
            node.held = False  # kept down by a fault
            node.expect_exit = None  # a status a fault expects
            node.down_since = None
            self.nodes.append(node)
        self.nodes[0].start()
        self.event("node started", node="n0", pid=self.nodes[0].pid)
        cluster.wait_for("n0 serving", lambda: self.nodes[0].logged(
            "chime serving"), 120)
        for n in self.nodes[1:]:
            n.start()
            self.event("node started", node=n.name, pid=n.pid)
        threading.Thread(target=self.poll_leases, daemon=True).start()

    def poll_leases(self):
        """Records the lease's holder at every change (straight to the
        server, not through a proxy). With shards, the node that holds the
        most shard leases stands for "the holder" (the faults' target), and
        self.shard_holders has each live shard lease's node."""
        last = None
        where = ("name LIKE 'shard/%'" if self.a.shards
                 else "name = 'scheduler'")
        while not self.stop_polling.wait(0.25):
            try:
                rows = cluster.psql(
                    self.pg.port, "SELECT holder, epoch, (expires_at - "
                    "(extract(epoch FROM clock_timestamp()) * 1e9)::bigint) "
                    f"/ 1000000, name FROM leases WHERE {where} AND "
                    "holder <> '' ORDER BY name", timeout=5)
            except Exception:  # the server is down: nothing to record
                continue
            rows = [l.split("\t") for l in rows.splitlines() if l]
            live = [(h, int(e), n) for h, e, left, n in rows if int(left) > 0]
            if self.a.shards:
                self.shard_holders = {n: self.node_of_holder(h)
                                      for h, e, n in live}
                counts = collections.Counter(self.shard_holders.values())
                top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
                current = tuple(top)
                if current != last:
                    last = current
                    self.leases.append((now(), top[0][0] if top else "-",
                                        len(live)))
                continue
            current = tuple((h, e) for h, e, n in live)
            if current != last:
                last = current
                for h, e in current or (("", 0),):
                    self.leases.append((now(), self.node_of_holder(h), e))

    def node_of_holder(self, holder):
        for n in self.nodes:
            if n.pid is not None and f" pid {n.pid} " in holder + " ":
                return n.name
        return holder or "-"

    def holder(self):
        """The node that holds the lease now (by the last poll), or None."""
        if not self.leases:
            return None
        _, name, _ = self.leases[-1]
        return next((n for n in self.nodes if n.name == name and
                     n.running()), None)

    def supervise(self):
        """Notes the nodes that exited and restarts them (a second later, as
        a service manager would), unless a fault keeps one down."""
        for n in self.nodes:
            if n.proc is None or n.running():
                continue
            if n.down_since is None:
                status = n.exited()
                n.down_since = now()
                self.exits.append(dict(time=n.down_since, node=n.name,
                                       status=status,
                                       expected=n.expect_exit))
                self.event("node exited", node=n.name, status=status)
                if status < 0 and status != n.expect_exit:
                    self.problem(f"{n.name} died of signal {-status} "
                                 f"(see {n.name}.log)")
                n.expect_exit = None
            if not n.held and now() - n.down_since >= 1.0:
                n.down_since = None
                n.start()
                self.event("node started", node=n.name, pid=n.pid)

    def sleep(self, seconds):
        """Sleeps while supervising."""
        end = time.monotonic() + seconds
        while True:
            self.supervise()
            left = end - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(0.1, left))

    def wait(self, what, fn, limit_s):
        """fn() until true, supervising; False (and a problem) on timeout."""
        end = time.monotonic() + limit_s
        while time.monotonic() < end:
            self.supervise()
            v = fn()
            if v:
                return v
            time.sleep(0.1)
        self.problem(f"waited {limit_s:.0f} s for {what}")
        return None

    def recent_starts(self, since):
        return [l for l in cluster.read_witness(self.witness)
                if float(l[4]) >= since]

    @staticmethod
    def on_time(lines):
        """The witness lines of attempts started within a second of their
        scheduled time."""
        return [l for l in lines
                if abs(float(l[4]) - cluster.parse_fire_id(l[0])[2]) < 1]

    def steady(self, limit_s):
        """Waits until a node holds the lease and runs jobs on time (not
        fires claimed ahead by a clock that was ahead), and every node is
        up; returns the holder."""
        def ok():
            h = self.holder()
            if h is None or not all(n.running() for n in self.nodes):
                return None
            recent = self.on_time(self.recent_starts(now() - 3))
            if self.a.shards:
                # Every shard held by a running node, and jobs on time.
                running = {n.name for n in self.nodes if n.running()}
                held = [v for v in self.shard_holders.values()
                        if v in running]
                return h if len(held) == self.a.shards and recent else None
            return h if any(l[1] == h.name for l in recent) else None
        # After a skewed clock, the cluster is off schedule for as long as
        # the skew: fires claimed ahead by a clock that was ahead wait for
        # their time to come round again, and a clock set back and then
        # forward is noticed only when the scheduler next wakes
        # (docs/cluster.md, "Chaos test").
        limit_s += self.skewed_by
        self.skewed_by = 0
        return self.wait("a steady cluster (a holder running jobs on time)",
                         ok, limit_s)

    # --- the faults -------------------------------------------------------

    def fault(self, kind, opts):
        holder = self.steady(self.a.steady_limit)
        if holder is None:
            return
        others = [n for n in self.nodes if n is not holder]
        record = dict(kind=kind, node=holder.name, start=now(), end=None,
                      recovered=None, **opts)
        self.faults.append(record)
        self.event("fault", kind=kind, node=holder.name, **opts)
        hold = self.ttl * 1.5 + 1  # longer than a lease
        if kind == "kill9":
            holder.held = True
            holder.expect_exit = -signal.SIGKILL
            holder.signal(signal.SIGKILL)
            self.sleep(self.rng.uniform(0.3, self.ttl))
            holder.held = False
        elif kind == "leave":
            holder.held = True
            holder.expect_exit = 0
            holder.signal(signal.SIGTERM)
            if self.wait("the holder to stop after SIGTERM",
                         lambda: not holder.running(), 30):
                record["stop_s"] = round(now() - record["start"], 3)
            self.sleep(self.ttl)
            holder.held = False  # restarted by supervise(): it joins again
        elif kind == "sigstop":
            holder.signal(signal.SIGSTOP)
            self.wait("a standby to take over from the stopped holder",
                      lambda: self.holder() not in (None, holder),
                      self.ttl * 3 + 10)
            self.sleep(1)
            holder.expect_exit = 3
            holder.signal(signal.SIGCONT)
            woke = now()
            if self.wait("the zombie to exit after SIGCONT",
                         lambda: not holder.running() or holder.down_since,
                         self.ttl * 3 + 5):
                record["zombie_exit_s"] = round(now() - woke, 3)
        elif kind == "pg_stop":
            self.pg.crash()
            self.event("postgres stopped", mode="immediate")
            self.sleep(self.rng.uniform(1, self.ttl * 1.5))
            self.pg.start()
            self.event("postgres started", port=self.pg.port)
        elif kind in ("cut_drop", "cut_reset"):
            p = self.proxies[self.nodes.index(holder)]
            p.cut(proxy.DROP if kind == "cut_drop" else proxy.RESET)
            holder.expect_exit = 3
            self.sleep(hold)
            exits = [e for e in self.exits if e["node"] == holder.name and
                     e["time"] >= record["start"]]
            record["holder_exit_s"] = round(
                exits[0]["time"] - record["start"], 3) if exits else None
            p.heal()
        elif kind == "skew_holder":
            holder.set_clock_offset(opts["offset"])
            self.sleep(hold + 2)
            holder.set_clock_offset(0)
        elif kind == "skew_standby":
            target = self.rng.choice(others)
            record["node"] = target.name
            target.set_clock_offset(opts["offset"])
            self.sleep(hold)
            target.set_clock_offset(0)
        elif kind == "skew_failover":
            for n in others:
                n.set_clock_offset(opts["offset"])
            holder.held = True
            holder.expect_exit = -signal.SIGKILL
            holder.signal(signal.SIGKILL)
            # Every other clock is off by more than max_clock_skew (1 s):
            # none of them may take the lease (docs/cluster.md, "Clocks").
            self.sleep(self.ttl * 2 + hold)
            taken = self.holder()
            record["taken_over_while_skewed"] = getattr(taken, "name", None)
            if taken not in (None, holder):
                self.problem(f"{taken.name} took the lease with its clock "
                             f"off by {opts['offset']} s")
            for n in others:
                n.set_clock_offset(0)
            self.wait("a standby to take over once its clock agrees",
                      lambda: self.holder() not in (None, holder),
                      self.ttl * 3 + 10)
            record["taken_over_by"] = getattr(self.holder(), "name", None)
            holder.held = False
        record["end"] = now()
        self.skewed_by = abs(opts.get("offset", 0))
        self.event("healed", kind=kind)
        # Recovered: a node runs jobs on time again after the heal.
        if self.wait(f"jobs running on time again after {kind}",
                     lambda: self.on_time(self.recent_starts(record["end"])),
                     self.a.steady_limit + abs(opts.get("offset", 0))):
            record["recovered"] = now()
        self.write_run_json()

    def schedule(self):
        if self.a.short:
            return list(SHORT_FAULTS)
        faults = []
        while len(faults) < 10000:
            batch = list(LONG_FAULTS)
            self.rng.shuffle(batch)
            faults += batch
        return faults

    def run(self):
        self.start()
        deadline = time.monotonic() + self.a.minutes * 60
        self.sleep(self.a.settle)
        for kind, opts in self.schedule():
            if not self.a.short and time.monotonic() >= deadline:
                break
            if self.a.only and kind not in self.a.only:
                continue
            self.fault(kind, opts)
            self.sleep(self.a.settle)
        self.steady(self.a.steady_limit)
        self.sleep(self.a.settle)

    # --- the end ----------------------------------------------------------

    def stop(self):
        """Stops everything this harness started, even after a failure."""
        self.stop_polling.set()
        for n in self.nodes:
            n.held = True
        for n in self.nodes:
            try:
                n.stop(grace_s=20)
            except Exception as e:  # keep stopping the others
                self.event("stop failed", node=n.name, error=repr(e))
        for n in self.nodes:
            n.kill()
        killed = cluster.kill_tagged(self.tag)
        if killed:
            self.event("killed leftover job processes", count=killed)
        for p in self.proxies:
            p.stop()

    def finish(self):
        ok = False
        try:
            if self.pg is not None and not self.pg.running():
                self.pg.start()
            cluster.dump_store(self.pg.port, os.path.join(self.root, "store"))
            self.write_run_json()
            c = checker.Checker(self.root, self.a.known_open)
            ok = c.check()
            with open(os.path.join(self.root, "checker.txt"), "w") as f:
                c.report(f)
            c.report(sys.stdout)
        finally:
            if self.pg is not None:
                self.pg.stop()
        for p in self.problems:
            print(f"FAIL harness: {p}")
        exits = {}
        for e in self.exits:
            exits[str(e["status"])] = exits.get(str(e["status"]), 0) + 1
        print(json.dumps({"faults": [
            {k: (round(v - self.faults[0]["start"], 1)
                 if k in ("start", "end", "recovered") and v else v)
             for k, v in f.items()} for f in self.faults],
            "node_exits_by_status": exits,
            "lease_changes": len(self.leases)}))
        return ok and not self.problems


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("chime", help="the chime binary")
    p.add_argument("--short", action="store_true",
                   help="CI: every fault kind once (lease 3s)")
    p.add_argument("--minutes", type=float, default=10,
                   help="the long version's length (faults in random order)")
    p.add_argument("--nodes", type=int, default=3)
    p.add_argument("--shards", type=int, default=0,
                   help="chime serve --shards: every node schedules the "
                   "jobs of its shards (default 0: one schedules)")
    p.add_argument("--copies", type=int, default=2,
                   help="copies of each job (5 jobs a copy)")
    p.add_argument("--lease-ttl", default=None,
                   help="default 3s with --short, else 5s")
    p.add_argument("--settle", type=float, default=2,
                   help="seconds between a fault's recovery and the next")
    p.add_argument("--steady-limit", type=float, default=60,
                   help="seconds a recovery may take before it is a failure")
    p.add_argument("--only", type=lambda s: s.split(","),
                   help="run only these fault kinds (comma-separated)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--known-open", type=lambda s: s.split(","), default=[],
                   help="checker problem kinds that are known open bugs "
                   "(docs/cluster.md): reported, not failing")
    p.add_argument("--out", help="the run directory (created; default: a new "
                   "temporary one)")
    p.add_argument("--keep", action="store_true",
                   help="keep the run directory even on success")
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args()
    a.chime = os.path.abspath(a.chime)
    a.lease_ttl = a.lease_ttl or ("3s" if a.short else "5s")
    if a.seed is None:
        a.seed = random.randrange(1 << 30)
    if not os.path.exists(cluster.FAKETIME_LIB):
        print(f"chaos: {cluster.FAKETIME_LIB} is missing: install libfaketime "
              "(scripts/install-deps.sh)", file=sys.stderr)
        return 2
    if a.out:
        cluster.remove_tree(a.out)
        os.makedirs(a.out)
        root = os.path.abspath(a.out)
    else:
        root = tempfile.mkdtemp(prefix="chime-chaos-")
    print(f"chaos: run directory {root}, seed {a.seed}", flush=True)

    def terminate(signum, frame):  # a timeout's SIGTERM: clean up first
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, terminate)
    h = Harness(a, root)
    ok = False
    started = time.monotonic()
    try:
        h.run()
    except BaseException as e:
        h.problem(f"harness error: {e!r}")
        if not isinstance(e, Exception):
            raise
    finally:
        h.stop()
        try:
            ok = h.finish()
        finally:
            # The server's files are large; the dump has what the checker
            # reads.
            if not a.keep:
                cluster.remove_tree(os.path.join(root, "pg", "data"))
    print(f"chaos: {'OK' if ok else 'FAILED'} in "
          f"{time.monotonic() - started:.0f} s; seed {a.seed}", flush=True)
    if ok and not a.keep:
        cluster.remove_tree(root)
    else:
        print(f"chaos: kept {root}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
