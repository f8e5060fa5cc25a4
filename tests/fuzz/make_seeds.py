#!/usr/bin/env python3
"""Writes the hand-made seed inputs for cron_fuzzer into a directory (one file per input).

    python3 tests/fuzz/make_seeds.py /tmp/cron_seeds

The seeds cover every syntax feature, a set of broken expressions, and daylight-saving days in
several zones (the option bytes after a NUL, see cron_fuzz_input.h). The checked-in corpus
(corpus/cron/) is these seeds plus what the fuzzer found, minimized with -merge=1.
"""
import hashlib
import os
import struct
import sys
from datetime import datetime, timezone

ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Pacific/Chatham",
         "America/Santiago", "Europe/Dublin", "Africa/Casablanca", "Pacific/Apia",
         "Antarctica/Troll", "Asia/Kathmandu", "America/St_Johns"]
DIALECTS = {"auto": 0, "vixie": 1, "seconds": 2, "quartz": 3}
FIRST_SECOND = -7 * 86400

VALID = [
    "* * * * *", "0 2 * * *", "30 2 * * *", "30 1 * * *", "*/15 * * * *", "0 * * * *",
    "0 9 * * MON-FRI", "0 0 1 JAN *", "0 0 * jan mon", "0 0 L * *", "0 0 L-3 * *", "0 0 LW * *",
    "0 0 15W * *", "0 0 1W * *", "0 0 31W * *", "0 0 * * 5L", "0 0 * * FRI#3", "0 0 * * FRIL",
    "0 0 * * L", "H H * * *", "H/15 * * * *", "H(0-29) * * * *", "H(0-29)/10 H(8-17) * * *",
    "H H H * *", "H H * * H", "@yearly", "@annually", "@monthly", "@weekly", "@daily",
    "@midnight", "@hourly", "@every 90s", "@every 1h30m", "@every 500ms", "@every 1d",
    "@every 1500ms", "CRON_TZ=Europe/Berlin 30 2 * * *", "TZ=America/New_York 0 9 * * *",
    "cron_tz=Asia/Kathmandu @daily", "0 30 2 * * *", "*/10 * * * * *", "0 0 12 ? * 2",
    "0 0 0 1 1 ? 2399", "0 0 0 29 2 ? 2024-2030/2", "0 22-2 * * *", "0 0 * * FRI-MON",
    "0 0 * * SAT-SUN", "0 0 * * 0,7", "5/15 * * * *", "10-50/10 * * * *", "0 0 1,15 * 1",
    "0 0 */2 * *", "0 0 29 2 *", "0 0 29 2 1", "59 23 31 12 *", "0 0 1 1 * 1970",
    "0 0 0 31 12 ? 2399", "* * * * * * *", "0 0 0 ? * 1#5", "0 0 0 L * ?", "0 0 0 ? * 7L",
    "0-59/7 0-23/5 1-31/3 1-12/2 0-6/2", "1,2,3,5,8,13,21,34,55 * * * *", "0 2,3 * * *",
    "*/20 1-3 * * *", "0 */3 * * *", "30 0-4 * * SUN",
]
BROKEN = [
    "", " ", "0 0 32 * *", "60 * * * *", "* 24 * * *", "* * 0 * *", "* * * 13 *", "* * * * 8",
    "* * * *", "* * * * * * * *", "0 0 30 2 *", "0 0 31 4,6,9,11 *", "*/0 * * * *",
    "*/61 * * * *", "0 0 5-1 * *", "@every", "@every 0s", "@every 5x", "@every 1h 2m", "@foo",
    "@daily extra", "CRON_TZ= 0 0 * * *", "CRON_TZ=Mars/Base * * * * *", "CRON_TZ=", "0 0 L-31 * *",
    "0 0 * * 1#6", "0 0 * * MON#0", "H(5-1) * * * *", "H(0-29 * * * *", "1,,2 * * * *",
    "0 0 0 * * * 2400", "0 0 0 * * * 1969", "L * * * *", "? * * * *", "0 0 ? * ? *",
    "\xff\xfe * * * *", "0 0 * * FOO", "0 0 * FOO *", "0 0 1-2-3 * *", "0 0 * * 1-", "*/ * * * *",
    "0 0 */1000000000000 * *", "99999999999999999999 * * * *", "0 0 0 ? * 0", "0 0 0 ? * 8",
    "0 0 L/2 * *", "0 0 ?/2 * *", "0 0 LW,L-2,15W * *", "H * * * * * 2026", "0 0 0 31 2 ? *",
    "0 0 0 30 2 ? 2000-2399", "0 0 0 29 2 ? 2100", "0 0 0 ? * 5#5 2026 2027",
]

# (expression, zone, flags, instant, hash key)
DST = [
    ("30 2 * * *", "Europe/Berlin", "", "2026-03-29T00:30:00Z"),
    ("30 2 * * *", "Europe/Berlin", "skip", "2026-03-29T00:30:00Z"),
    ("30 2 * * *", "Europe/Berlin", "", "2026-10-25T00:00:00Z"),
    ("30 2 * * *", "Europe/Berlin", "twice", "2026-10-25T00:45:00Z"),
    ("*/15 * * * *", "Europe/Berlin", "", "2026-10-25T00:50:00Z"),
    ("*/15 * * * *", "Europe/Berlin", "", "2026-03-29T00:50:00Z"),
    ("30 1 * * *", "America/New_York", "", "2026-11-01T05:00:00Z"),
    ("30 1 * * *", "America/New_York", "twice", "2026-11-01T05:45:00Z"),
    ("0 2 * * *", "America/New_York", "", "2026-03-08T06:30:00Z"),
    ("15 2 * * *", "Australia/Lord_Howe", "", "2026-10-03T15:00:00Z"),
    ("15 1 * * *", "Australia/Lord_Howe", "", "2026-04-04T14:00:00Z"),
    ("0 0 * * *", "America/Santiago", "", "2026-09-06T03:00:00Z"),
    ("30 23 * * *", "America/Santiago", "", "2026-04-05T02:00:00Z"),
    ("0 1 * * *", "Europe/Dublin", "", "2026-03-29T00:30:00Z"),
    ("0 2 * * *", "Africa/Casablanca", "", "2026-02-15T00:00:00Z"),
    ("0 12 * * *", "Pacific/Apia", "", "2011-12-29T00:00:00Z"),
    ("0 * 30 12 * 2011", "Pacific/Apia", "seconds", "2011-12-29T00:00:00Z"),
    ("0 2 * * *", "Antarctica/Troll", "", "2026-03-29T00:30:00Z"),
    ("45 2 * * *", "Pacific/Chatham", "", "2026-09-26T13:00:00Z"),
    ("0 */2 * * *", "America/St_Johns", "", "2026-11-01T03:00:00Z"),
    ("30 2 * * *", "Europe/Berlin", "all", "2399-12-31T12:00:00Z"),
    ("0 0 1,15 * MON", "UTC", "all", "2026-01-01T00:00:00Z"),
    ("* * * * *", "Asia/Kathmandu", "", "1970-01-01T00:00:00Z"),
    ("0 0 0 1 1 ? 2399", "UTC", "quartz", "2399-06-01T00:00:00Z"),
    ("0 0 12 ? * 1", "UTC", "quartz", "2026-03-28T00:00:00Z"),
]


def option_bytes(zone, flags, instant, hash_key=0):
    f = 0
    for word in flags.split(","):
        if word in DIALECTS:
            f |= DIALECTS[word]
        elif word == "all":
            f |= 4
        elif word == "skip":
            f |= 8
        elif word == "twice":
            f |= 16
    seconds = int(datetime.strptime(instant, "%Y-%m-%dT%H:%M:%SZ")
                  .replace(tzinfo=timezone.utc).timestamp())
    return bytes([f, ZONES.index(zone), hash_key]) + struct.pack("<Q", seconds - FIRST_SECOND)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    inputs = [e.encode("latin-1") for e in VALID + BROKEN]
    for expr, zone, flags, instant in DST:
        inputs.append(expr.encode() + b"\0" + option_bytes(zone, flags, instant))
    for expr in ["H H * * *", "H(0-29)/10 H(8-17) * * *"]:
        inputs.append(expr.encode() + b"\0" + option_bytes("UTC", "", "2026-03-28T00:00:00Z", 7))
    for data in inputs:
        with open(os.path.join(out, hashlib.sha1(data).hexdigest()), "wb") as f:
            f.write(data)
    print(f"wrote {len(inputs)} seeds to {out}")


if __name__ == "__main__":
    main()
