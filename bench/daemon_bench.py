#!/usr/bin/env python3
"""The daemon with many jobs from files: load time, memory per job, idle CPU.

Generates N jobs in job files, starts the real daemon on them

    chime serve --jobs-dir D --data-dir T --listen 127.0.0.1:0 --log-format json

and measures, per run:

  applied_s    process start -> the log line "job files applied" (files read,
               parsed, validated and handed to the scheduler);
  load_s       process start -> "chime serving" AND /readyz reports "jobs":N;
  persisted_s  process start -> /metrics shows N jobs written to the store
               (the scheduler writes jobs to SQLite behind AddJob, so /readyz
               can be ready before the store has them);
  rss_bytes    VmRSS once the jobs are persisted and a settle time has passed,
               and pss_bytes from smaps_rollup; bytes_per_job is rss_bytes
               minus the RSS of the same daemon on an empty jobs directory
               (rss_baseline_bytes, measured the same way), divided by N;
  idle_cpu_pct utime+stime of the process over a window that starts there,
               as a percentage of one core (clock ticks: 0.03% resolution
               over 30 s); idle_cpu_pct_schedstat the same from the threads'
               schedstat run time, in ns.

Also: cpu_load_s (process CPU at "chime serving"), rss_hwm_bytes (VmHWM,
the peak during the load), store_bytes (the data directory), stop_s,
run_log_lines (fire/run log lines seen: 0 when nothing fired), loadavg (the
1-minute load average before and after the run).

One JSON line per run, then one line of medians. Standard library only.
Jobs are shell jobs (`command: "true"`) with cron schedules that fire at
most daily, in five zones, none of them in the hours around the run (so the
window is idle: no fire runs). The daemon is stopped with SIGTERM and must
exit 0 within --stop-timeout-s.

    python3 bench/daemon_bench.py build/release/cli/chime --jobs 100000 --runs 3
"""

import argparse
import datetime
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import zoneinfo

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")

ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo",
         "Australia/Sydney"]
DOW = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]
MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP",
          "OCT", "NOV", "DEC"]


class BenchError(Exception):
    pass


# ----------------------------------------------------------------------------
# Job files


def allowed_hours(zone, horizon_h):
    """Local hours of `zone` that are not within an hour before now or
    `horizon_h` hours after it: a schedule at these hours cannot fire while
    the benchmark runs."""
    tz = zoneinfo.ZoneInfo(zone)
    now = datetime.datetime.now(datetime.timezone.utc)
    banned = set()
    t = now - datetime.timedelta(hours=1)
    while t <= now + datetime.timedelta(hours=horizon_h):
        banned.add(t.astimezone(tz).hour)
        t += datetime.timedelta(minutes=10)
    return [h for h in range(24) if h not in banned]


def schedule_for(rng, hours):
    """A cron expression that fires at most once a day, at one of `hours`."""
    m, h = rng.randrange(60), rng.choice(hours)
    kind = rng.random()
    if kind < 0.10:
        return f"{m} {h} * * *"                                   # daily
    if kind < 0.25:
        return f"{m} {h} * * MON-FRI"                             # workdays
    if kind < 0.40:
        return f"{m} {h} * * {rng.choice(DOW)}"                   # weekly
    if kind < 0.80:
        return f"{m} {h} {rng.randint(1, 28)} * *"                # monthly
    if kind < 0.85:
        return f"{m} {h} L * *"                                   # month end
    if kind < 0.90:
        return f"{rng.randrange(60)} {m} {h} {rng.randint(1, 28)} * *"  # secs
    return f"{m} {h} {rng.randint(1, 28)} {rng.choice(MONTHS)} *"  # yearly


def job_yaml(rng, file_no, job_no, hours_by_zone):
    """One job of a `jobs:` list, as YAML lines; every field valid per
    docs/jobs.md."""
    g = file_no * 1_000_000 + job_no
    zone = ZONES[g % len(ZONES)]
    lines = [f"  - id: job-{file_no:04d}-{job_no:05d}"]
    if g % 3 == 0:
        lines.append(f"    namespace: team-{g % 17}")
    lines.append(f'    schedule: "{schedule_for(rng, hours_by_zone[zone])}"')
    if zone != "UTC":
        lines.append(f"    zone: {zone}")
    if zone == "Europe/Berlin" and g % 10 == 1:
        lines.append("    dst: { gap: skip, repeat: once }")
    lines.append('    shell: { command: "true" }')
    if g % 4 == 0:
        lines.append("    retry: { max_attempts: 3, initial_backoff: 10s, "
                     "max_backoff: 5m }")
    if g % 5 == 0:
        lines.append("    timeout: 10m")
    if g % 6 == 0:
        lines.append(f'    labels: {{ team: data, tier: "{g % 3}" }}')
    if g % 7 == 0:
        lines.append("    overlap: buffer_one")
        lines.append("    misfire: skip")
    if g % 11 == 0:
        lines.append("    jitter: 30s")
    return lines


def write_jobs(directory, jobs, files, seed, horizon_h):
    """Writes `jobs` jobs spread over `files` files; returns the bytes
    written."""
    rng = random.Random(seed)
    hours = {z: allowed_hours(z, horizon_h) for z in ZONES}
    total = 0
    per_file, extra = divmod(jobs, files) if files else (0, 0)
    for f in range(files):
        n = per_file + (1 if f < extra else 0)
        lines = [f"# generated by bench/daemon_bench.py: {n} jobs", "jobs:"]
        for j in range(n):
            lines.extend(job_yaml(rng, f, j, hours))
        if n == 0:
            lines = ["jobs: []"]
        text = "\n".join(lines) + "\n"
        with open(os.path.join(directory, f"jobs-{f:04d}.yaml"), "w") as out:
            out.write(text)
        total += len(text)
    return total


# ----------------------------------------------------------------------------
# /proc


def proc_status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if value.strip().endswith("kB"):
                fields[key] = int(value.split()[0]) * 1024
    return fields


def pss_bytes(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def cpu_seconds(pid):
    """utime + stime of the whole process (all threads), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    # The command name may hold spaces: fields start after its ')'.
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def run_ns(pid):
    """Time on a CPU of all the process's threads, in ns, from
    /proc/<pid>/task/*/schedstat: finer than utime+stime's clock ticks (an
    idle window of 30 s resolves 0.03% with ticks). None when the kernel has
    no schedstat."""
    total, seen = 0, 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
                seen += 1
        except FileNotFoundError:
            continue  # the thread ended
        except (OSError, ValueError, IndexError):
            return None
    return total if seen else None


def threads_cpu(pid):
    """{tid: (comm, cpu seconds)} for every thread of the process."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        out[tid] = (comm, (int(fields[11]) + int(fields[12])) / CLK_TCK)
    return out


def loadavg():
    """The 1-minute load average (other work on the machine)."""
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def dir_bytes(path):
    total = 0
    for root, _, names in os.walk(path):
        for name in names:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total


# ----------------------------------------------------------------------------
# The daemon


class Daemon:
    """A `chime serve` child whose JSON log lines are read on a thread."""

    def __init__(self, binary, jobs_dir, data_dir):
        self.lock = threading.Lock()
        self.events = {}      # msg of interest -> (monotonic time, record)
        self.lines = 0        # log lines read
        self.fire_lines = 0   # lines about runs (there should be none)
        self.errors = []      # warn/error lines, first few
        self.changed = threading.Condition(self.lock)
        self.start = time.monotonic()
        self.proc = subprocess.Popen(
            [binary, "serve", "--jobs-dir", jobs_dir, "--data-dir", data_dir,
             "--listen", "127.0.0.1:0", "--log-format", "json"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        # Kept cheap: the daemon logs a line per job added, and a reader that
        # falls behind would slow it down (the pipe fills).
        for raw in self.proc.stderr:
            now = time.monotonic()
            with self.lock:
                self.lines += 1
                if b'"msg":"job added"' in raw:
                    continue
                try:
                    record = json.loads(raw)
                except ValueError:
                    record = {"msg": raw.decode(errors="replace").strip()}
                msg = record.get("msg", "")
                if msg in ("job files applied", "chime serving", "stopped"):
                    self.events.setdefault(msg, (now, record))
                    self.changed.notify_all()
                elif "fire_id" in record:  # "fire ..." / "run ..." events
                    self.fire_lines += 1
                if record.get("level") in ("warn", "error") and \
                        len(self.errors) < 5:
                    self.errors.append(raw.decode(errors="replace").strip())

    def wait_event(self, msg, deadline):
        with self.lock:
            while msg not in self.events:
                if self.proc.poll() is not None:
                    raise BenchError(f"the daemon exited ({self.proc.returncode})"
                                     f" before logging {msg!r}: {self.errors}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BenchError(f"no {msg!r} log line in time")
                self.changed.wait(min(left, 0.05))
            return self.events[msg]

    def stop(self, timeout_s):
        """SIGTERM; returns (exit status, seconds to exit). Kills the daemon
        and raises if it does not exit in time."""
        t0 = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)
            raise BenchError(f"the daemon did not exit within {timeout_s} s "
                             "of SIGTERM (killed)")
        self.reader.join(timeout=5)
        return rc, time.monotonic() - t0

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)


def http_get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}",
                                timeout=5) as r:
        return r.read().decode()


def put_jobs_written(port):
    """Jobs the scheduler has written to the store (sum of the put_jobs
    batches), and the store time they took, from /metrics."""
    text = http_get(port, "/metrics")
    items = re.search(r'^chime_store_write_items_sum\{op="put_jobs"\} (\S+)',
                      text, re.M)
    secs = re.search(r'^chime_store_write_seconds_sum\{op="put_jobs"\} (\S+)',
                     text, re.M)
    return (float(items.group(1)) if items else 0.0,
            float(secs.group(1)) if secs else 0.0)


def one_run(args, binary, jobs_dir, n, tmp_root, window_s):
    data_dir = tempfile.mkdtemp(prefix="chime-bench-data-", dir=tmp_root)
    load_start = loadavg()
    d = None
    try:
        d = Daemon(binary, jobs_dir, data_dir)
        deadline = d.start + args.load_timeout_s
        applied_t, applied = d.wait_event("job files applied", deadline)
        serving_t, serving = d.wait_event("chime serving", deadline)
        cpu_at_serving = cpu_seconds(d.proc.pid)
        port = int(serving["listen"].rsplit(":", 1)[1])
        ready = {}
        while True:  # /readyz: the jobs applied
            try:
                ready = json.loads(http_get(port, "/readyz"))
                if ready.get("jobs") == n:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise BenchError(f"/readyz did not show {n} jobs: {ready}")
            time.sleep(0.005)
        ready_t = time.monotonic()
        if ready.get("job_file_errors"):
            raise BenchError(f"job file errors: {ready['job_file_errors']}")
        if applied.get("added") != n or applied.get("errors") != 0:
            raise BenchError(f"unexpected 'job files applied': {applied}")
        while True:  # the store: every job written
            written, put_s = put_jobs_written(port)
            if written >= n:
                break
            if time.monotonic() > deadline:
                raise BenchError(f"only {written} of {n} jobs persisted")
            time.sleep(0.02)
        persisted_t = time.monotonic()
        cpu_at_persisted = cpu_seconds(d.proc.pid)
        time.sleep(args.settle_s)

        pid = d.proc.pid
        status = proc_status(pid)
        pss = pss_bytes(pid)
        with d.lock:
            lines_before = d.lines
        t0, c0, th0 = time.monotonic(), cpu_seconds(pid), threads_cpu(pid)
        ns0 = run_ns(pid)
        time.sleep(window_s)
        t1, c1, th1 = time.monotonic(), cpu_seconds(pid), threads_cpu(pid)
        ns1 = run_ns(pid)
        status_end = proc_status(pid)
        with d.lock:
            lines_in_window = d.lines - lines_before
            fire_lines = d.fire_lines
        busiest = sorted(
            ((th1[t][1] - th0[t][1], th1[t][0], t) for t in th1 if t in th0),
            reverse=True)[:3]
        rc, stop_s = d.stop(args.stop_timeout_s)
        if rc != 0:
            raise BenchError(f"the daemon exited {rc} after SIGTERM")
        return {
            "jobs": n,
            "applied_s": round(applied_t - d.start, 3),
            "serving_s": round(serving_t - d.start, 3),
            "load_s": round(max(serving_t, ready_t) - d.start, 3),
            "persisted_s": round(persisted_t - d.start, 3),
            "put_jobs_store_s": round(put_s, 3),
            "cpu_load_s": round(cpu_at_serving, 2),
            "cpu_persisted_s": round(cpu_at_persisted, 2),
            "rss_bytes": status["VmRSS"],
            "rss_end_bytes": status_end["VmRSS"],
            "rss_hwm_bytes": status_end["VmHWM"],
            "pss_bytes": pss,
            "threads": len(th1),
            "idle_cpu_pct": round(100 * (c1 - c0) / (t1 - t0), 3),
            "idle_cpu_pct_schedstat": (
                round(100 * (ns1 - ns0) / 1e9 / (t1 - t0), 4)
                if ns0 is not None and ns1 is not None else None),
            "idle_cpu_busiest_threads": [
                [comm, tid, round(100 * s / (t1 - t0), 3)]
                for s, comm, tid in busiest if s > 0],
            "window_s": round(t1 - t0, 2),
            "log_lines_in_window": lines_in_window,
            "run_log_lines": fire_lines,
            "store_bytes": dir_bytes(data_dir),
            "stop_s": round(stop_s, 3),
            "exit": rc,
            "loadavg": [load_start, loadavg()],
        }
    finally:
        if d is not None:
            d.kill()
        shutil.rmtree(data_dir, ignore_errors=True)


def median_of(runs, key):
    values = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(values) if values else None


def main():
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("chime", help="the chime binary (build/release/cli/chime)")
    p.add_argument("--jobs", type=int, default=100_000, help="jobs (N)")
    p.add_argument("--files", type=int, default=0,
                   help="job files (default: N / 1000, at least 1)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--window-s", type=float, default=30.0,
                   help="idle CPU window after load")
    p.add_argument("--settle-s", type=float, default=2.0,
                   help="wait after the jobs are persisted, before measuring")
    p.add_argument("--baseline-window-s", type=float, default=None,
                   help="idle window of the 0-job baseline (default: the "
                   "same as --window-s)")
    p.add_argument("--load-timeout-s", type=float, default=300.0)
    p.add_argument("--stop-timeout-s", type=float, default=40.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--tmp-dir", default=None,
                   help="where the temporary jobs and data directories go")
    args = p.parse_args()
    binary = os.path.abspath(args.chime)
    if not os.access(binary, os.X_OK):
        p.error(f"{args.chime} is not an executable")
    n = args.jobs
    files = args.files or max(1, n // 1000)
    window = args.window_s
    baseline_window = args.baseline_window_s or window

    tmp_root = tempfile.mkdtemp(prefix="chime-daemon-bench-", dir=args.tmp_dir)
    try:
        empty_dir = os.path.join(tmp_root, "jobs-empty")
        jobs_dir = os.path.join(tmp_root, "jobs")
        os.mkdir(empty_dir)
        os.mkdir(jobs_dir)
        horizon_h = 1 + args.runs * (window + 120) / 3600
        t = time.monotonic()
        size = write_jobs(jobs_dir, n, files, args.seed, horizon_h)
        print(json.dumps({"generated_jobs": n, "files": files,
                          "bytes": size,
                          "seconds": round(time.monotonic() - t, 2)}),
              flush=True)

        baseline = one_run(args, binary, empty_dir, 0, tmp_root,
                           baseline_window)
        baseline["baseline"] = True
        print(json.dumps(baseline), flush=True)
        runs = []
        for i in range(args.runs):
            r = one_run(args, binary, jobs_dir, n, tmp_root, window)
            r["files"] = files
            r["rss_baseline_bytes"] = baseline["rss_bytes"]
            r["bytes_per_job"] = round(
                (r["rss_bytes"] - baseline["rss_bytes"]) / n) if n else None
            if r["pss_bytes"] is not None and baseline["pss_bytes"]:
                r["pss_bytes_per_job"] = round(
                    (r["pss_bytes"] - baseline["pss_bytes"]) / n) if n else None
            r["run"] = i + 1
            runs.append(r)
            print(json.dumps(r), flush=True)
        keys = ["applied_s", "serving_s", "load_s", "persisted_s",
                "put_jobs_store_s", "cpu_load_s", "rss_bytes", "rss_hwm_bytes",
                "pss_bytes", "bytes_per_job", "pss_bytes_per_job",
                "idle_cpu_pct", "idle_cpu_pct_schedstat", "window_s", "store_bytes", "stop_s"]
        medians = {"median_of_runs": len(runs), "jobs": n, "files": files,
                   "rss_baseline_bytes": baseline["rss_bytes"],
                   "idle_cpu_pct_baseline": baseline["idle_cpu_pct"],
                   "idle_cpu_pct_schedstat_baseline":
                       baseline["idle_cpu_pct_schedstat"]}
        medians.update({k: median_of(runs, k) for k in keys})
        print(json.dumps(medians), flush=True)
    except BenchError as e:
        print(f"daemon_bench: {e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(tmp_root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
