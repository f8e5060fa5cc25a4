#!/usr/bin/env python3
"""The chaos test's offline checker: reads a run directory, fails on any fire
lost or doubled (standard library only).

    python3 tests/chaos/checker.py RUN_DIR [--pg postgresql://...]

RUN_DIR holds what tests/chaos/chaos.py leaves (checker_test.py makes small
ones by hand):

  run.json     the jobs (id, period_s, delivery, overlap), the fault windows
               (kind, node, start, end; unix seconds by the real clock)
  witness      one line per attempt start and one per attempt end, written by
               the job itself outside the database:
                 <fire id> <node> <attempt> <fencing token> <start> <end|->
  store/*.csv  the store's tables (jobs, runs, transitions, attempts, missed),
               as tests/chaos/cluster.py dumps them; with --pg the checker
               dumps them first from that database
  n*.log       the nodes' logs (searched for sanitizer reports)

It fails (exit status 1, each problem on a line that names the fire) on:

  claimed twice     a scheduled time of a job claimed by more than one run
                    (under two generations; one FireKey twice is refused by the
                    store's unique key, checked anyway);
  executed twice    a (fire id, attempt) started more than once, or a fire of
                    an at-most-once job started more than once (any attempts);
  not claimed       an attempt witnessed for a fire the store has no run for
                    (or with a higher attempt number than the run has): work
                    done by a node whose claim was not accepted;
  silently lost     a fire with neither a witnessed attempt, nor a run, nor a
                    missed record. Which fires must have one: every scheduled
                    time of a job from the first to the last scheduled time
                    that has a run or a witnessed attempt. No window is
                    excluded: a fire due while no node held the lease (a
                    failover, the database down) is still decided by the next
                    holder, which resumes from the job's watermark and records
                    what it does not run (misfire policy), so it must have a
                    record too. Only fires after the last claimed one are left
                    out (the run ended before any node decided them);
  tokens backwards  (a) in the store, in commit order (the writing
                    transaction's id, xmin): a run or transition written with a
                    lower fencing token than an earlier committed one -- a
                    zombie's write accepted after its successor's; (b) in the
                    witness, in order of real start time: an attempt started
                    with a lower token than an attempt started before it -- a
                    zombie that started work after its successor did;
  overlap           two attempts of a job whose overlap policy forbids overlap
                    (skip, buffer_one, buffer_all, replace) whose witnessed
                    [start, end] intervals intersect (an attempt with no end
                    line, killed, counts as the instant of its start);
  succeeded unseen  a run the store records succeeded with no witnessed
                    attempt;
  ran and missed    a fire with a witnessed attempt that is also inside a
                    missed record whose count says it covers every fire of its
                    range;
  node unknown      an attempt whose node name ($NODE, set on each daemon) is
                    missing or not one of run.json's nodes;
  sanitizer         an AddressSanitizer / UndefinedBehaviorSanitizer report in
                    a node's log.

It prints counts (fires, executions, runs by state, missed by reason, lost,
duplicates, faults by kind) and the lateness (witnessed start minus scheduled
time, first attempts) in percentiles, for fires due or started inside a
fault window (from the fault until jobs ran on time again after its heal) and
outside, then one JSON line with the same.
"""

import argparse
import collections
import datetime
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cluster  # noqa: E402

# include/chime/run_state.h: RunState and MissReason, stored as numbers.
RUN_STATES = ["claiming", "pending", "running", "retrying", "succeeded",
              "failed", "cancelled", "lost"]
MISS_REASONS = ["misfire_skip", "misfire_run_once", "misfire_max_catchup",
                "catchup_window", "paused", "overlap", "buffer_full",
                "replaced", "job_removed", "fenced", "quota", "ended"]
NO_OVERLAP = ("skip", "buffer_one", "buffer_all", "replace")
SANITIZER = re.compile(r"ERROR: (Address|Leak|Thread)Sanitizer|runtime error:")
NANOS = 10**9


def job_key(namespace, name):
    """FireKey::ToString's job part: 'default' is left out."""
    return name if namespace == "default" else f"{namespace}/{name}"


def state_name(n):
    n = int(n)
    return RUN_STATES[n] if 0 <= n < len(RUN_STATES) else f"state_{n}"


def reason_name(n):
    n = int(n)
    return MISS_REASONS[n] if 0 <= n < len(MISS_REASONS) else f"reason_{n}"


def fmt_time(t):
    """Unix seconds as a time of day in UTC, to the millisecond."""
    return datetime.datetime.fromtimestamp(
        t, datetime.timezone.utc).strftime("%H:%M:%S.%f")[:-3]


def percentiles(values):
    """p50, p90, p99, max (nearest rank), in seconds; None when empty."""
    if not values:
        return None
    v = sorted(values)

    def rank(p):
        return v[min(len(v) - 1, max(0, math.ceil(p / 100 * len(v)) - 1))]
    return {"n": len(v), "min": round(v[0], 3), "p50": round(rank(50), 3),
            "p90": round(rank(90), 3), "p99": round(rank(99), 3),
            "max": round(v[-1], 3)}


class Execution:
    """One witnessed attempt: its start line and, unless it was killed, its
    end line."""

    def __init__(self, fields):
        self.fire_id, self.node, attempt, token, start, _ = fields
        self.job, self.generation, self.scheduled, self.manual = \
            cluster.parse_fire_id(self.fire_id)
        self.attempt = int(attempt)
        self.token = int(token)
        self.start = float(start)
        self.end = None

    def describe(self):
        end = fmt_time(self.end) if self.end is not None else "no end"
        return (f"{self.fire_id} attempt {self.attempt} on {self.node} "
                f"token {self.token} {fmt_time(self.start)}-{end}")


def read_executions(path):
    by_key = {}
    for fields in cluster.read_witness(path):
        key = tuple(fields[:5])
        e = by_key.get(key)
        if e is None:
            e = by_key[key] = Execution(fields)
        if fields[5] != "-":
            e.end = float(fields[5])
    return sorted(by_key.values(), key=lambda e: e.start)


class Store:
    """The store's tables, from the CSV files of a dump."""

    def __init__(self, store_dir):
        def table(name):
            path = os.path.join(store_dir, f"{name}.csv")
            return cluster.read_csv(path) if os.path.exists(path) else []
        self.jobs = {r["id"]: job_key(r["namespace"], r["name"])
                     for r in table("jobs")}
        self.runs = table("runs")
        for r in self.runs:
            r["job"] = self.jobs.get(r["job_id"], f"job_id_{r['job_id']}")
            r["sched"] = int(r["scheduled"]) / NANOS
            r["manual"] = r["manual"] in ("t", "true", "1")
        self.transitions = table("transitions")
        self.missed = table("missed")
        for m in self.missed:
            m["job"] = self.jobs.get(m["job_id"], f"job_id_{m['job_id']}")
            m["first_s"] = int(m["first"]) / NANOS
            m["last_s"] = int(m["last"]) / NANOS
        self.runs_by_id = {r["id"]: r for r in self.runs}
        self.run_of_fire = {}
        for r in self.runs:
            self.run_of_fire.setdefault(
                (r["job"], int(r["generation"]), r["sched"], r["manual"]),
                []).append(r)


def fire_id(job, generation, t):
    """FireKey::ToString of a scheduled fire."""
    return f"{job}:{generation}:{cluster.utc(t)}"


class Checker:
    def __init__(self, run_dir, known_open=()):
        """`known_open`: kinds of problem that are known open bugs
        (docs/cluster.md, "Chaos test"): reported as such, with their
        examples, but not failing the check."""
        self.dir = run_dir
        self.known_open_kinds = set(known_open)
        self.known_open = {}
        with open(os.path.join(run_dir, "run.json")) as f:
            self.run = json.load(f)
        self.jobs = {job_key(j.get("namespace", "default"), j["id"]): j
                     for j in self.run["jobs"]}
        self.faults = self.run.get("faults", [])
        # With shards (chime serve --shards), each shard's lease has its own
        # fencing tokens: tokens go forward per shard.
        self.shards = int(self.run.get("shards", 0))
        self.executions = read_executions(os.path.join(run_dir, "witness"))
        self.store = Store(os.path.join(run_dir, "store"))
        self.problems = collections.defaultdict(list)
        self.counts = collections.OrderedDict()

    def fail(self, kind, message):
        self.problems[kind].append(message)

    def in_fault(self, t):
        """The fault whose window holds t: from its start until the cluster
        ran jobs again after it was healed."""
        return next((f for f in self.faults if f["start"] <= t <= max(
            f.get("end") or f["start"], f.get("recovered") or 0)), None)

    def where(self, t):
        f = self.in_fault(t)
        return f" (during {f['kind']} of {f.get('node', '-')})" if f else ""

    # --- the checks -------------------------------------------------------

    def check_claims(self):
        by_time = collections.defaultdict(list)
        for r in self.store.runs:
            if not r["manual"]:
                by_time[(r["job"], r["sched"])].append(r)
        for (job, t), runs in sorted(by_time.items()):
            if len(runs) > 1:
                self.fail("claimed twice", (
                    f"{job} at {cluster.utc(t)}: runs "
                    + ", ".join(f"{r['id']} (generation {r['generation']}, "
                                f"token {r['token']}, "
                                f"{state_name(r['state'])})" for r in runs)))

    def check_executions(self):
        by_attempt = collections.defaultdict(list)
        by_fire = collections.defaultdict(list)
        for e in self.executions:
            by_attempt[(e.fire_id, e.attempt)].append(e)
            by_fire[e.fire_id].append(e)
        dup = 0
        for (fid, attempt), es in by_attempt.items():
            if len(es) > 1:
                dup += len(es) - 1
                self.fail("executed twice", f"{fid} attempt {attempt}: " +
                          "; ".join(e.describe() for e in es))
        for fid, es in by_fire.items():
            job = self.jobs.get(es[0].job, {})
            if job.get("delivery") == "at_most_once" and len(es) > 1 and \
                    len({e.attempt for e in es}) > 1:
                dup += len(es) - 1
                self.fail("executed twice", f"{fid} is at-most-once and ran "
                          f"{len(es)} times: " +
                          "; ".join(e.describe() for e in es))
        for r in self.store.runs:
            job = self.jobs.get(r["job"], {})
            if job.get("delivery") == "at_most_once" and int(r["attempt"]) > 1:
                self.fail("executed twice", (
                    f"{fire_id(r['job'], r['generation'], r['sched'])} is "
                    f"at-most-once; its run {r['id']} has attempt "
                    f"{r['attempt']}"))
        known = {n["name"] for n in self.run.get("nodes", [])}
        for node in sorted({e.node for e in self.executions}):
            if node == "?" or (known and node not in known):
                self.fail("node unknown", (
                    f"attempts witnessed on node {node!r}: the node's name "
                    "($NODE) did not reach the job's environment"))
        self.counts["duplicates"] = dup
        self.counts["executions"] = len(self.executions)
        self.counts["executions_unfinished"] = sum(
            e.end is None for e in self.executions)
        self.counts["fires_witnessed"] = len(by_fire)
        self.by_fire = by_fire

    def check_claimed(self):
        for e in self.executions:
            runs = self.store.run_of_fire.get(
                (e.job, e.generation, e.scheduled, e.manual), [])
            if not runs:
                self.fail("not claimed", f"{e.describe()}: the store has no "
                          f"run for this fire{self.where(e.start)}")
            elif max(int(r["attempt"]) for r in runs) < e.attempt:
                self.fail("not claimed", (
                    f"{e.describe()}: the store's run {runs[0]['id']} has "
                    f"attempt {runs[0]['attempt']} only{self.where(e.start)}"))

    def expected_fires(self, job):
        """The job's scheduled times from its first to its last claimed or
        witnessed fire."""
        times = [r["sched"] for r in self.store.runs
                 if r["job"] == job and not r["manual"]]
        times += [e.scheduled for e in self.executions
                  if e.job == job and not e.manual]
        if not times:
            return []
        period = self.jobs[job]["period_s"]
        first = math.ceil(min(times) / period) * period
        return list(range(int(first), int(max(times)) + 1, period))

    def check_lost(self):
        fires = silent = 0
        for job in sorted(self.jobs):
            witnessed = {e.scheduled for e in self.executions
                         if e.job == job and not e.manual}
            claimed = {r["sched"] for r in self.store.runs
                       if r["job"] == job and not r["manual"]}
            missed = [(m["first_s"], m["last_s"]) for m in self.store.missed
                      if m["job"] == job]
            for t in self.expected_fires(job):
                fires += 1
                if t in witnessed or t in claimed or any(
                        a <= t <= b for a, b in missed):
                    continue
                silent += 1
                self.fail("silently lost", (
                    f"{job} at {cluster.utc(t)}: no run, no missed record, "
                    f"no witnessed attempt{self.where(t)}"))
        self.counts["fires"] = fires
        self.counts["silently_lost"] = silent

    def shard(self, job):
        """The shard of job `job` ('id' or 'ns/id'): 0 without shards."""
        if not self.shards or job is None:
            return 0
        namespace, _, name = job.rpartition("/")
        return cluster.shard_of(namespace or "default", name, self.shards)

    def check_store_tokens(self):
        writes = []
        for r in self.store.runs:
            if r.get("xid"):
                writes.append((int(r["xid"]), self.shard(r["job"]),
                               int(r["token"]),
                               f"run {r['id']} "
                               f"({fire_id(r['job'], r['generation'], r['sched'])}"
                               f", {state_name(r['state'])})"))
        for t in self.store.transitions:
            if t.get("xid"):
                run = self.store.runs_by_id.get(t["run_id"])
                what = fire_id(run["job"], run["generation"], run["sched"]) \
                    if run else f"run {t['run_id']}"
                writes.append((int(t["xid"]),
                               self.shard(run["job"] if run else None),
                               int(t["token"]),
                               f"transition {t['seq']} of run {t['run_id']} "
                               f"({what}: {state_name(t['from_state'])} -> "
                               f"{state_name(t['to_state'])})"))
        writes.sort()
        # By shard: (token, what) of the highest token committed so far.
        high = {}
        for xid, shard, token, what in writes:
            h = high.get(shard)
            if h is not None and token < h[0]:
                self.fail("tokens backwards", (
                    f"{what} committed (xid {xid}) with token {token} after "
                    f"{h[1]} with token {h[0]}"))
            elif h is None or token > h[0]:
                high[shard] = (token, f"{what} (xid {xid})")

    def check_witness_tokens(self):
        high = {}  # by shard
        for e in self.executions:
            shard = self.shard(cluster.parse_fire_id(e.fire_id)[0])
            h = high.get(shard)
            if h is not None and e.token < h.token:
                self.fail("tokens backwards", (
                    f"{e.describe()} started {e.start - h.start:.3f} s "
                    f"after {h.describe()}{self.where(e.start)}"))
            elif h is None or e.token > h.token:
                high[shard] = e

    def check_overlap(self):
        by_job = collections.defaultdict(list)
        for e in self.executions:
            by_job[e.job].append(e)
        for job, es in sorted(by_job.items()):
            if self.jobs.get(job, {}).get("overlap", "skip") not in NO_OVERLAP:
                continue
            running = None  # the execution that ends last so far
            for e in es:  # by start
                if running is not None and e.start < running_end:
                    self.fail("overlap", (
                        f"{job} (overlap "
                        f"{self.jobs.get(job, {}).get('overlap', 'skip')}): "
                        f"{e.describe()} started while {running.describe()} "
                        f"ran{self.where(e.start)}"))
                end = e.end if e.end is not None else e.start
                if running is None or end > running_end:
                    running, running_end = e, end

    def check_consistency(self):
        ran = {(e.job, e.scheduled): e for e in self.executions
               if not e.manual}
        for r in self.store.runs:
            key = fire_id(r["job"], r["generation"], r["sched"])
            if state_name(r["state"]) == "succeeded" and not r["manual"] and \
                    key not in self.by_fire:
                self.fail("succeeded unseen", (
                    f"{key}: run {r['id']} is recorded succeeded but no "
                    "attempt of it was witnessed"))
        for m in self.store.missed:
            period = self.jobs.get(m["job"], {}).get("period_s")
            if not period:
                continue
            slots = int(m["last_s"] // period - math.ceil(
                m["first_s"] / period)) + 1
            if int(m["count"]) != slots:
                continue  # not contiguous: which fires it holds is unknown
            for t in range(int(math.ceil(m["first_s"] / period) * period),
                           int(m["last_s"]) + 1, period):
                e = ran.get((m["job"], t))
                if e is not None:
                    self.fail("ran and missed", (
                        f"{e.fire_id} ran ({e.describe()}) and is recorded "
                        f"missed ({reason_name(m['reason'])}, {m['count']} "
                        f"fires from {cluster.utc(m['first_s'])})"))

    def check_logs(self):
        for name in sorted(os.listdir(self.dir)):
            if not re.fullmatch(r"n\d+\.log", name):
                continue
            with open(os.path.join(self.dir, name), errors="replace") as f:
                for n, line in enumerate(f, 1):
                    if SANITIZER.search(line):
                        self.fail("sanitizer", f"{name}:{n}: {line.strip()}")
                        break

    # --- the report -------------------------------------------------------

    def tally(self):
        c = self.counts
        c["runs"] = len(self.store.runs)
        states = collections.Counter(state_name(r["state"])
                                     for r in self.store.runs)
        c["runs_by_state"] = dict(sorted(states.items()))
        c["lost"] = states.get("lost", 0)
        reasons = collections.Counter()
        for m in self.store.missed:
            reasons[reason_name(m["reason"])] += int(m["count"])
        c["missed"] = sum(reasons.values())
        c["missed_by_reason"] = dict(sorted(reasons.items()))
        c["faults"] = dict(sorted(collections.Counter(
            f["kind"] for f in self.faults).items()))
        c["nodes_in_witness"] = sorted({e.node for e in self.executions})
        inside, outside = [], []
        early = 0
        for fid, es in self.by_fire.items():
            first = min(es, key=lambda e: (e.attempt, e.start))
            if first.manual:
                continue
            late = first.start - first.scheduled
            early += late < -0.5
            # Inside when it was due or started during a fault (a node whose
            # clock is ahead starts fires due after the fault ended).
            faulted = self.in_fault(first.scheduled) or \
                self.in_fault(first.start)
            (inside if faulted else outside).append(late)
        c["early_starts"] = early  # more than 0.5 s before the schedule
        c["lateness_s"] = {"outside_faults": percentiles(outside),
                           "inside_faults": percentiles(inside)}

    def check(self):
        self.check_claims()
        self.check_executions()
        self.check_claimed()
        self.check_lost()
        self.check_store_tokens()
        self.check_witness_tokens()
        self.check_overlap()
        self.check_consistency()
        self.check_logs()
        self.tally()
        for kind in self.known_open_kinds & set(self.problems):
            self.known_open[kind] = self.problems.pop(kind)
        return not self.problems

    def report(self, out):
        c = self.counts
        print(f"checker: {self.dir}", file=out)
        print(f"  fires {c['fires']} (witnessed {c['fires_witnessed']}), "
              f"executions {c['executions']} "
              f"({c['executions_unfinished']} with no end line), "
              f"runs {c['runs']} {c['runs_by_state']}", file=out)
        print(f"  missed {c['missed']} {c['missed_by_reason']}", file=out)
        print(f"  lost (recorded) {c['lost']}, silently lost "
              f"{c['silently_lost']}, duplicates {c['duplicates']}, "
              f"early starts {c['early_starts']}", file=out)
        print(f"  faults {c['faults']}", file=out)
        for where, p in c["lateness_s"].items():
            print(f"  lateness {where}: {p}", file=out)
        for kind, messages in self.known_open.items():
            print(f"KNOWN OPEN (docs/cluster.md, not failing) {kind}: "
                  f"{len(messages)}", file=out)
            for m in messages[:5]:
                print(f"  {m}", file=out)
        for kind, messages in self.problems.items():
            print(f"FAIL {kind}: {len(messages)}", file=out)
            for m in messages[:20]:
                print(f"  {m}", file=out)
            if len(messages) > 20:
                print(f"  ... and {len(messages) - 20} more", file=out)
        summary = dict(c, ok=not self.problems,
                       problems={k: len(v) for k, v in self.problems.items()},
                       known_open={k: len(v)
                                   for k, v in self.known_open.items()})
        print(json.dumps(summary), file=out)
        print("checker: " + ("OK" if not self.problems else "FAILED"),
              file=out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("run_dir")
    p.add_argument("--pg", help="dump the store from this PostgreSQL URL "
                   "into RUN_DIR/store first")
    p.add_argument("--known-open", type=lambda s: s.split(","), default=[],
                   help="problem kinds that are known open bugs: reported, "
                   "not failing")
    a = p.parse_args(argv)
    if a.pg:
        m = re.match(r"postgres(?:ql)?://[^@]*@?127\.0\.0\.1:(\d+)/", a.pg)
        if not m:
            p.error("--pg: expected postgresql://user@127.0.0.1:PORT/db")
        cluster.dump_store(int(m.group(1)), os.path.join(a.run_dir, "store"))
    checker = Checker(a.run_dir, a.known_open)
    ok = checker.check()
    checker.report(sys.stdout)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
