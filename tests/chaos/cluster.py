"""A chime cluster on this machine, for tests and benchmarks (standard library only).

Shared by the chaos test (tests/chaos/chaos.py) and the failover benchmark
(bench/failover_bench.py):

  Postgres   a real PostgreSQL 15 server in a temporary directory, on 127.0.0.1
             only (as the `postgres` user when run as root); it can be stopped
             like a crash (`pg_ctl stop -m immediate`) and started again on the
             same port, and its store dumped to CSV files for the checker.
  Node       one `chime serve --store postgresql://...` daemon with its own data
             directory, a name in $NODE and, optionally, libfaketime preloaded
             so that the harness can skew its wall clock at run time.
  WITNESS_*  the job body that appends one line per attempt to a witness file
             outside the database, and its reader.

`python3 cluster.py postgres DIR` runs just the server, for the web UI's tests
(tests/web/postgres.mjs).

Every child runs with a parent-death signal (setpriv --pdeathsig), so a harness
killed by a timeout leaves no server or daemon behind.
"""

import csv
import datetime
import json
import math
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import time

PG_BIN = "/usr/lib/postgresql/15/bin"
FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"


class Timeout(Exception):
    pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, fn, limit_s, step=0.05):
    """fn() until it returns something true, at most limit_s seconds."""
    deadline = time.monotonic() + limit_s
    while True:
        value = fn()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise Timeout(f"waited {limit_s} s for {what}")
        time.sleep(step)


def alive(pid):
    """Whether pid is a live process (not gone, not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def kill_tagged(tag, sig=signal.SIGKILL):
    """Signals every process whose environment holds CHIME_TEST_TAG=tag: the
    job processes the daemons started (in process groups of their own)."""
    needle = f"CHIME_TEST_TAG={tag}".encode()
    n = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    os.kill(int(pid), sig)
                    n += 1
        except OSError:
            pass
    return n


def deathsig(sig="KILL", user=None):
    """The prefix that runs a command with a parent-death signal (and as
    `user`)."""
    cmd = ["setpriv"]
    if user is not None:
        cmd += [f"--reuid={user}", f"--regid={user}", "--clear-groups"]
    return cmd + ["--pdeathsig", sig, "--"]


def psql(port, sql, timeout=30):
    """psql's unaligned, tab-separated output of sql on 127.0.0.1:port."""
    return subprocess.run(
        ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", "-F", "\t",
         "-h", "127.0.0.1", "-p", str(port), "-U", "postgres",
         "-d", "postgres", "-c", sql],
        check=True, capture_output=True, text=True, timeout=timeout).stdout


class Postgres:
    """A PostgreSQL 15 server in root/pg, on 127.0.0.1 only."""

    def __init__(self, root):
        self.dir = os.path.join(root, "pg")
        self.data = os.path.join(self.dir, "data")
        os.mkdir(self.dir)
        self.user = None
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
            os.chmod(root, 0o755)
            self.user = "postgres"
        self.as_user = deathsig("KILL", self.user) if self.user else []
        self.port = free_port()
        self.proc = None
        subprocess.run(self.as_user + [f"{PG_BIN}/initdb", "-D", self.data,
                                       "-A", "trust", "-U", "postgres",
                                       "--no-sync"],
                       check=True, stdout=subprocess.DEVNULL)
        self.start()

    def start(self):
        # SIGQUIT if the harness dies: the immediate shutdown.
        self.log = open(os.path.join(self.dir, "log"), "a")
        self.proc = subprocess.Popen(
            deathsig("QUIT", self.user) + [
                f"{PG_BIN}/postgres", "-D", self.data, "-p", str(self.port),
                "-k", self.dir, "-c", "listen_addresses=127.0.0.1"],
            stdout=subprocess.DEVNULL, stderr=self.log)
        wait_for("PostgreSQL", self.ready, 60, step=0.1)

    def ready(self):
        return subprocess.run(
            ["pg_isready", "-q", "-h", "127.0.0.1", "-p", str(self.port)]
        ).returncode == 0

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def url(self, port=None):
        return (f"postgresql://postgres@127.0.0.1:{port or self.port}"
                "/postgres")

    def psql(self, sql, timeout=30):
        return psql(self.port, sql, timeout)

    def query(self, sql):
        return [line.split("\t") for line in self.psql(sql).splitlines()
                if line]

    def crash(self):
        """`pg_ctl stop -m immediate`: every backend quits at once, no
        checkpoint; the next start replays the WAL."""
        subprocess.run(self.as_user + [f"{PG_BIN}/pg_ctl", "stop", "-D",
                                       self.data, "-m", "immediate", "-w",
                                       "-t", "30"],
                       check=True, stdout=subprocess.DEVNULL, timeout=60)
        self.proc.wait(30)
        self.log.close()

    def stop(self):
        if not self.running():
            return
        self.proc.send_signal(signal.SIGINT)  # fast shutdown
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


# The store's tables as the checker reads them (tests/chaos/checker.py):
# one CSV file each, with a header. xmin is the writing transaction's id:
# transactions that write under a lease take their ids after the lease was
# granted (the fence check locks the lease row FOR SHARE, which assigns the
# id), so ordering by it orders fenced writes by commit, across nodes.
STORE_DUMP = {
    "jobs": "SELECT id, namespace, name FROM jobs ORDER BY id",
    "runs": "SELECT id, job_id, generation, scheduled, manual, state, "
            "attempt, token, xmin::text::bigint AS xid FROM runs ORDER BY id",
    "transitions": "SELECT run_id, seq, from_state, to_state, attempt, "
                   "token, at, xmin::text::bigint AS xid, "
                   "translate(encode(detail, 'escape'), E'\\n\\t', '  ') "
                   "AS detail FROM transitions ORDER BY run_id, seq",
    "attempts": "SELECT run_id, number, token, started_at, finished_at, "
                "outcome FROM attempts ORDER BY run_id, number",
    "missed": "SELECT job_id, first, last, reason, generation, count "
              "FROM missed ORDER BY job_id, first",
    "leases": "SELECT name, holder, epoch, expires_at FROM leases",
}


def dump_store(port, out_dir):
    """Writes out_dir/<table>.csv for every table the checker reads, from the
    server on 127.0.0.1:port."""
    os.makedirs(out_dir, exist_ok=True)
    for table, sql in STORE_DUMP.items():
        text = psql(port, f"COPY ({sql}) TO STDOUT WITH (FORMAT csv, HEADER)")
        with open(os.path.join(out_dir, f"{table}.csv"), "w") as f:
            f.write(text)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class Node:
    """One `chime serve` on the shared store. `store_url` may point at a
    proxy (tests/chaos/proxy.py) rather than at the server itself."""

    def __init__(self, chime, root, index, store_url, lease_ttl, witness,
                 tag, faketime=False, extra_args=()):
        self.name = f"n{index}"
        self.port = free_port()
        self.args = [chime, "serve", "--store", store_url, "--lease-ttl",
                     lease_ttl, "--data-dir", os.path.join(root, self.name),
                     "--jobs-dir", os.path.join(root, "jobs"), "--listen",
                     f"127.0.0.1:{self.port}", "--log-format", "json",
                     "--node-name", self.name, *extra_args]
        self.env = dict(os.environ, NODE=self.name, WITNESS=witness,
                        CHIME_TEST_TAG=tag)
        self.clock_file = None
        if faketime:
            # libfaketime, loaded with LD_PRELOAD: the wall clock (time(),
            # gettimeofday(), CLOCK_REALTIME) is offset by what the file says,
            # re-read at every call; the monotonic clock is left alone.
            self.clock_file = os.path.join(root, f"{self.name}.faketime")
            self.set_clock_offset(0)
            self.env.update(
                LD_PRELOAD=FAKETIME_LIB, FAKETIME_DONT_FAKE_MONOTONIC="1",
                FAKETIME_NO_CACHE="1", FAKETIME_TIMESTAMP_FILE=self.clock_file)
            # A sanitized chime checks that its runtime is loaded first.
            self.env["ASAN_OPTIONS"] = ":".join(filter(None, [
                os.environ.get("ASAN_OPTIONS"), "verify_asan_link_order=0"]))
        self.log_path = os.path.join(root, f"{self.name}.log")
        self.proc = None
        self.log = None
        self.log_start = 0
        self.starts = 0

    def set_clock_offset(self, seconds):
        # Written aside and renamed: the library never reads half a file.
        tmp = self.clock_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{seconds:+d}\n")
        os.replace(tmp, self.clock_file)

    def start(self):
        self.log = open(self.log_path, "a")
        self.log_start = os.path.getsize(self.log_path)
        self.proc = subprocess.Popen(deathsig("KILL") + self.args,
                                     env=self.env, stdout=subprocess.DEVNULL,
                                     stderr=self.log, start_new_session=True)
        self.starts += 1

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def exited(self):
        """The exit status (negative: a signal) once it ended, else None."""
        if self.proc is None:
            return None
        status = self.proc.poll()
        if status is not None and self.log is not None:
            self.log.close()
            self.log = None
        return status

    def logged(self, prefix):
        """Whether this start of the node logged a message starting so."""
        with open(self.log_path) as f:
            f.seek(self.log_start)
            for line in f:
                try:
                    if json.loads(line).get("msg", "").startswith(prefix):
                        return True
                except json.JSONDecodeError:
                    pass
        return False

    def signal(self, sig):
        if self.running():
            self.proc.send_signal(sig)

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
        if self.proc is not None:
            self.proc.wait()
        self.exited()

    def stop(self, grace_s=30):
        if self.running():
            self.proc.send_signal(signal.SIGCONT)
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.exited()


# The witness: a job body that appends, for each attempt, a line when it
# starts (end "-") and one when it ends, with timestamps taken by the real
# clock (LD_PRELOAD removed: a node's clock may be faked):
#   <fire id> <node> <attempt> <fencing token> <start> <end or ->
WITNESS_BODY = (
    's=$(env -u LD_PRELOAD date +%s.%N); '
    'echo "$CHIME_FIRE_ID ${NODE:-?} $CHIME_ATTEMPT $CHIME_FENCING_TOKEN $s -"'
    ' >> "$WITNESS"; sleep {sleep}; '
    'e=$(env -u LD_PRELOAD date +%s.%N); '
    'echo "$CHIME_FIRE_ID ${NODE:-?} $CHIME_ATTEMPT $CHIME_FENCING_TOKEN $s $e"'
    ' >> "$WITNESS"')


def witness_body(sleep_s):
    return WITNESS_BODY.replace("{sleep}", f"{sleep_s:g}")


def read_witness(path):
    """The witness's lines, split: [fire_id, node, attempt, token, start,
    end]. A torn line (a process killed mid-write) is left out."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return []
    return [l.split() for l in text.splitlines() if len(l.split()) == 6]


_MASK = (1 << 64) - 1


def _mix(x):
    """src/cluster/shards.cc's Mix (SplitMix64's finalizer)."""
    x ^= x >> 30
    x = (x * 0xbf58476d1ce4e5b9) & _MASK
    x ^= x >> 27
    x = (x * 0x94d049bb133111eb) & _MASK
    return x ^ (x >> 31)


def _fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & _MASK
    return h


def stable_hash(text):
    """cluster::StableHash."""
    return _mix(_fnv1a(text.encode()))


def shard_of(namespace, name, shards):
    """cluster::ShardOf: the shard of job namespace/name among `shards`."""
    key = f"{len(namespace.encode())}:{namespace}/{name}".encode()
    return _mix(_fnv1a(key)) % shards


def parse_fire_id(fire_id):
    """'job:3:2026-11-30T08:00:00.25Z' -> (job, generation, unix seconds
    (float), manual). A job of another namespace is 'ns/job'."""
    manual = fire_id.endswith(":manual")
    if manual:
        fire_id = fire_id[:-len(":manual")]
    # The time holds colons too: job:generation:YYYY-MM-DDTHH:MM:SS[.f]Z.
    job, generation, when = fire_id.split(":", 2)
    t = datetime.datetime.fromisoformat(when.replace("Z", "+00:00"))
    return job, int(generation), t.timestamp(), manual


def utc(t):
    """Unix seconds as RFC 3339 in UTC, as chime writes them (fractions of a
    second only when non-zero)."""
    whole = math.floor(t)
    text = datetime.datetime.fromtimestamp(
        whole, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    if t > whole:
        text += f"{t - whole:.9f}"[1:].rstrip("0")
    return text + "Z"


def remove_tree(path):
    shutil.rmtree(path, ignore_errors=True)


def serve_postgres(root):
    """Runs a Postgres in root (an existing directory) for a test in another
    language: prints {"url": ...} as one line once it answers, and stops it
    when stdin closes (the test ended or died) or on SIGTERM."""
    pg = Postgres(root)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        print(json.dumps({"url": pg.url()}), flush=True)
        sys.stdin.read()
    finally:
        pg.stop()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "postgres":
        sys.exit("usage: cluster.py postgres DIR")
    serve_postgres(sys.argv[2])
