#!/usr/bin/env python3
"""Tests of the chaos test's checker (tests/chaos/checker.py) on run
directories made by hand: a clean record passes, and each kind of fault the
checker exists for -- a duplicate, a silent loss, a fencing token going
backwards, an overlap, ... -- is caught, naming the fire. Standard library
only; `python3 tests/chaos/checker_test.py`.
"""

import contextlib
import csv
import io
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checker  # noqa: E402
import cluster  # noqa: E402

T0 = 1_800_000_000  # a multiple of every period below
NS = 10**9


class Record:
    """A run directory's contents, built up by a test, then written."""

    def __init__(self):
        self.jobs = [
            dict(id="a", namespace="default", period_s=2,
                 delivery="at_most_once", overlap="skip"),
            dict(id="b", namespace="ops", period_s=1,
                 delivery="at_least_once", overlap="buffer_one"),
        ]
        self.job_ids = {"a": 1, "ops/b": 2}
        self.runs = []
        self.transitions = []
        self.missed = []
        self.witness = []
        self.faults = [dict(kind="kill9", node="n0", start=T0 + 5.5,
                            end=T0 + 6.5, recovered=T0 + 7)]
        self.logs = {"n0.log": "", "n1.log": ""}
        self.xid = 100
        self.shards = 0

    def run(self, job, t, token, node="n0", attempt=1, generation=1,
            state=4, start_delay=0.05, duration=0.3, witness=True):
        """A fire claimed, run and witnessed (start and end lines), with its
        transitions pending -> running -> succeeded."""
        run_id = len(self.runs) + 1
        self.xid += 1
        claim_xid = self.xid
        self.xid += 1
        self.runs.append(dict(id=run_id, job_id=self.job_ids[job],
                              generation=generation, scheduled=t * NS,
                              manual="f", state=state, attempt=attempt,
                              token=token, xid=self.xid))
        for seq, (a, b) in enumerate([(1, 2), (2, state)]):
            self.transitions.append(dict(
                run_id=run_id, seq=seq, from_state=a, to_state=b,
                attempt=attempt, token=token, at=t * NS,
                xid=claim_xid if seq == 0 else self.xid, detail=""))
        if witness:
            self.attempt(job, t, token, node, attempt, generation,
                         start_delay, duration)
        return run_id

    def attempt(self, job, t, token, node="n0", attempt=1, generation=1,
                start_delay=0.05, duration=0.3):
        fid = f"{job}:{generation}:{cluster.utc(t)}"
        start = t + start_delay
        self.witness.append(f"{fid} {node} {attempt} {token} {start:.6f} -")
        if duration is not None:
            self.witness.append(f"{fid} {node} {attempt} {token} "
                                f"{start:.6f} {start + duration:.6f}")

    def miss(self, job, first, last, count, reason=5):
        self.missed.append(dict(job_id=self.job_ids[job], first=first * NS,
                                last=last * NS, reason=reason, generation=1,
                                count=count))

    def write(self, root):
        with open(os.path.join(root, "run.json"), "w") as f:
            json.dump(dict(jobs=self.jobs, faults=self.faults,
                           shards=self.shards), f)
        with open(os.path.join(root, "witness"), "w") as f:
            f.write("".join(l + "\n" for l in self.witness))
        for name, text in self.logs.items():
            with open(os.path.join(root, name), "w") as f:
                f.write(text)
        store = os.path.join(root, "store")
        os.makedirs(store, exist_ok=True)
        tables = {
            "jobs": [dict(id=1, namespace="default", name="a"),
                     dict(id=2, namespace="ops", name="b")],
            "runs": self.runs, "transitions": self.transitions,
            "missed": self.missed,
        }
        for name, rows in tables.items():
            with open(os.path.join(store, f"{name}.csv"), "w",
                      newline="") as f:
                if rows:
                    w = csv.DictWriter(f, fieldnames=list(rows[0]))
                    w.writeheader()
                    w.writerows(rows)


def clean_record():
    """Two jobs over 8 seconds, a failover at T0+6 (token 1 on n0, then 2 on
    n1): every fire run or recorded missed."""
    r = Record()
    for t in range(T0, T0 + 8):
        token, node = (1, "n0") if t < T0 + 6 else (2, "n1")
        if t == T0 + 4:
            r.miss("a", t, t, 1)  # overlap skip
        elif t % 2 == 0:
            r.run("a", t, token, node=node)
        r.run("ops/b", t, token, node=node)
    return r


class CheckerTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="chime-checker-test-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def check(self, record):
        record.write(self.dir)
        c = checker.Checker(self.dir)
        ok = c.check()
        out = io.StringIO()
        c.report(out)
        self.report = out.getvalue()
        return ok, c

    def assertCaught(self, record, kind, *words):
        ok, c = self.check(record)
        self.assertFalse(ok, self.report)
        self.assertEqual(set(c.problems), {kind}, self.report)
        for w in words:
            self.assertIn(w, "\n".join(c.problems[kind]), self.report)
        self.assertIn("checker: FAILED", self.report)

    def test_clean_record_passes(self):
        ok, c = self.check(clean_record())
        self.assertTrue(ok, self.report)
        self.assertEqual(c.counts["fires"], 4 + 8)
        self.assertEqual(c.counts["silently_lost"], 0)
        self.assertEqual(c.counts["missed"], 1)
        self.assertEqual(c.counts["duplicates"], 0)
        self.assertEqual(c.counts["faults"], {"kill9": 1})
        self.assertEqual(c.counts["lateness_s"]["outside_faults"]["n"], 8)
        self.assertEqual(c.counts["lateness_s"]["inside_faults"]["n"], 3)
        self.assertEqual(c.counts["lateness_s"]["outside_faults"]["p50"],
                         0.05)
        self.assertIn("checker: OK", self.report)

    def test_an_attempt_executed_twice(self):
        r = clean_record()
        r.attempt("ops/b", T0 + 3, 1, node="n2", start_delay=0.5)
        self.assertCaught(r, "executed twice",
                          "ops/b:1:2027-01-15T08:00:03Z attempt 1", "n2")

    def test_an_at_most_once_fire_run_again(self):
        r = clean_record()
        # Lost on n0, then run again (attempt 2) by its successor.
        r.attempt("a", T0 + 2, 2, node="n1", attempt=2, start_delay=5)
        ok, c = self.check(r)
        self.assertFalse(ok)
        self.assertIn("a:1:2027-01-15T08:00:02Z is at-most-once and ran 2 "
                      "times", "\n".join(c.problems["executed twice"]))

    def test_a_scheduled_time_claimed_under_two_generations(self):
        r = clean_record()
        r.run("a", T0 + 2, 2, generation=2, witness=False, state=1)
        self.assertCaught(r, "claimed twice", "a at 2027-01-15T08:00:02Z")

    def test_a_silent_loss(self):
        r = clean_record()
        # ops/b at T0+3: no run, no missed record, no witness line.
        lost = next(x for x in r.runs
                    if x["job_id"] == 2 and x["scheduled"] == (T0 + 3) * NS)
        r.runs.remove(lost)
        r.transitions = [x for x in r.transitions if x["run_id"] != lost["id"]]
        r.witness = [l for l in r.witness
                     if not l.startswith("ops/b:1:2027-01-15T08:00:03Z")]
        self.assertCaught(r, "silently lost", "ops/b at 2027-01-15T08:00:03Z")

    def test_a_loss_during_a_fault_names_it(self):
        r = clean_record()
        # a at T0+6, in the kill9 window: claimed nowhere, missed nowhere;
        # a later fire of a (T0+8) puts it inside the job's span.
        r.runs = [x for x in r.runs if not (x["job_id"] == 1 and
                                            x["scheduled"] == (T0 + 6) * NS)]
        r.witness = [l for l in r.witness
                     if not l.startswith("a:1:2027-01-15T08:00:06Z")]
        r.run("a", T0 + 8, 2, node="n1")
        self.assertCaught(r, "silently lost", "a at 2027-01-15T08:00:06Z",
                          "during kill9 of n0")

    def test_a_fencing_token_backwards_in_the_store(self):
        r = clean_record()
        # A zombie's (token 1) transition committed after its successor's
        # writes with token 2.
        run_id = r.runs[0]["id"]
        r.xid += 1
        r.transitions.append(dict(run_id=run_id, seq=2, from_state=4,
                                  to_state=4, attempt=1, token=1, at=0,
                                  xid=r.xid, detail=""))
        self.assertCaught(r, "tokens backwards", "token 1 after",
                          "with token 2", "a:1:2027-01-15T08:00:00Z")

    def test_a_fencing_token_backwards_in_the_witness(self):
        r = clean_record()
        # A zombie (n0, token 1) starts an attempt after n1 (token 2) did:
        # it is also in the store (its claim was accepted in order), so only
        # the witness shows it.
        r.witness = [l for l in r.witness
                     if not l.startswith("ops/b:1:2027-01-15T08:00:07Z")]
        r.attempt("ops/b", T0 + 7, 1, node="n0")
        self.assertCaught(r, "tokens backwards",
                          "ops/b:1:2027-01-15T08:00:07Z attempt 1 on n0 "
                          "token 1")

    def test_tokens_go_forward_per_shard(self):
        """With shards each shard's lease has its own tokens: a and ops/b
        are in shards 0 and 2 of 3 (as cluster::ShardOf computes, pinned by
        src/cluster/shards_test.cc's values below)."""
        self.assertEqual(cluster.stable_hash(""), 0xf52a15e9a9b5e89b)
        self.assertEqual(cluster.shard_of("default", "nightly", 64), 45)
        self.assertEqual(cluster.shard_of("ops", "backup", 64), 16)
        self.assertEqual(cluster.shard_of("default", "a", 3), 0)
        self.assertEqual(cluster.shard_of("ops", "b", 3), 2)
        # a's shard stays with n0 under token 2; ops/b's moves from n0
        # (token 1) to n1 (token 3) at T0+2, and a keeps writing after it.
        r = Record()
        for t in range(T0, T0 + 8):
            if t % 2 == 0:
                r.run("a", t, 2)
            r.run("ops/b", t, 3 if t >= T0 + 2 else 1,
                  node="n1" if t >= T0 + 2 else "n0")
        r.shards = 3
        ok, c = self.check(r)
        self.assertTrue(ok, self.report)
        r.shards = 0  # one lease for all: the same record is a violation
        self.assertCaught(r, "tokens backwards")

    @staticmethod
    def overlapping_record():
        """ops/b at T0+1 runs on past T0+2's start (policy buffer_one)."""
        r = clean_record()
        r.witness = [l for l in r.witness
                     if not l.startswith("ops/b:1:2027-01-15T08:00:01Z")]
        r.attempt("ops/b", T0 + 1, 1, duration=1.5)
        return r

    def test_an_overlap(self):
        r = self.overlapping_record()
        self.assertCaught(r, "overlap", "ops/b:1:2027-01-15T08:00:02Z",
                          "started while ops/b:1:2027-01-15T08:00:01Z")

    def test_a_known_open_kind_is_reported_but_does_not_fail(self):
        r = self.overlapping_record()
        r.write(self.dir)
        c = checker.Checker(self.dir, ["overlap"])
        self.assertTrue(c.check())
        out = io.StringIO()
        c.report(out)
        self.assertIn("KNOWN OPEN (docs/cluster.md, not failing) overlap: 1",
                      out.getvalue())
        self.assertIn("ops/b:1:2027-01-15T08:00:02Z", out.getvalue())
        # Any other kind still fails.
        r.attempt("a", T0 + 4, 1, node="n2")  # recorded missed, not claimed
        r.write(self.dir)
        self.assertFalse(checker.Checker(self.dir, ["overlap"]).check())

    def test_an_attempt_the_store_never_accepted(self):
        r = clean_record()
        r.attempt("a", T0 + 4, 1, node="n2")  # recorded missed, not claimed
        ok, c = self.check(r)
        self.assertFalse(ok)
        self.assertIn("not claimed", c.problems)
        self.assertIn("a:1:2027-01-15T08:00:04Z attempt 1 on n2",
                      "\n".join(c.problems["not claimed"]))
        self.assertIn("ran and missed", c.problems)

    def test_a_success_no_one_witnessed(self):
        r = clean_record()
        r.witness = [l for l in r.witness
                     if not l.startswith("a:1:2027-01-15T08:00:02Z")]
        self.assertCaught(r, "succeeded unseen", "a:1:2027-01-15T08:00:02Z")

    def test_a_sanitizer_report(self):
        r = clean_record()
        r.logs["n1.log"] = ("{\"msg\": \"chime serving\"}\n"
                            "src/x.cc:1:2: runtime error: signed integer "
                            "overflow\n")
        self.assertCaught(r, "sanitizer", "n1.log:2")

    def test_a_node_name_that_did_not_reach_the_job(self):
        r = clean_record()
        r.witness = [l.replace(" n1 ", " ? ") for l in r.witness]
        self.assertCaught(r, "node unknown", "'?'")

    def test_the_command_line(self):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            clean_record().write(self.dir)
            self.assertEqual(checker.main([self.dir]), 0)
            r = clean_record()
            r.attempt("a", T0, 1, node="n1", start_delay=0.9)
            r.write(self.dir)
            self.assertEqual(checker.main([self.dir]), 1)
        self.assertIn("FAIL executed twice: 1", out.getvalue())


if __name__ == "__main__":
    unittest.main()
