#!/usr/bin/env python3
"""Writes varied `chime cron next --json` batch cases, one JSON object per line.

    python3 bench/gen_cron_cases.py 100000 > /tmp/cases.jsonl
    /usr/bin/time -f '%U user %S sys' build/release/cli/chime cron next --json \
        < /tmp/cases.jsonl > /dev/null

Every expression is generated from random field values, so few cases (about 1.5%) share a parsed
schedule with an earlier one; zones, dialects, start instants, counts and id types vary too, and about 1% of the lines
are bad (broken JSON, a missing expr, a bad start, an expression the engine rejects) to exercise
the error path. The output is deterministic for a given count and --seed.
"""
import argparse
import json
import random
import sys

ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Sydney",
         "Australia/Lord_Howe", "America/Sao_Paulo", "Asia/Tokyo", "Europe/London",
         "America/Los_Angeles", "Pacific/Chatham", "Asia/Kathmandu", "Africa/Casablanca",
         "America/Santiago", "Europe/Dublin"]
DOW_NAMES = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"]
MONTH_NAMES = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV",
               "DEC"]


def field(rng, lo, hi, star_weight=3):
    kind = rng.randrange(7 + star_weight)
    if kind >= 7:
        return "*"
    if kind == 0:
        return str(rng.randint(lo, hi))
    if kind == 1:
        values = sorted(rng.sample(range(lo, hi + 1), rng.randint(2, min(4, hi - lo + 1))))
        return ",".join(map(str, values))
    if kind == 2:
        a = rng.randint(lo, hi)
        b = rng.randint(a, hi)
        return f"{a}-{b}"
    if kind == 3:
        return f"*/{rng.randint(2, max(2, (hi - lo) // 2))}"
    if kind == 4:
        a = rng.randint(lo, hi)
        return f"{a}/{rng.randint(2, max(2, (hi - lo) // 3))}"
    if kind == 5:
        a = rng.randint(lo, hi)
        b = rng.randint(a, hi)
        return f"{a}-{b}/{rng.randint(1, 5)}"
    return str(rng.randint(lo, hi))


def day_of_month(rng):
    special = rng.randrange(12)
    if special == 0:
        return "L"
    if special == 1:
        return f"L-{rng.randint(1, 5)}"
    if special == 2:
        return f"{rng.randint(1, 28)}W"
    if special == 3:
        return "LW"
    return field(rng, 1, 28, star_weight=6)


def day_of_week(rng, quartz=False):
    special = rng.randrange(12)
    first = 1 if quartz else 0
    if special == 0:
        return f"{rng.randint(first, first + 6)}#{rng.randint(1, 4)}"
    if special == 1:
        return f"{rng.randint(first, first + 6)}L"
    if special == 2:
        a, b = sorted(rng.sample(range(7), 2))
        return f"{DOW_NAMES[a]}-{DOW_NAMES[b]}"
    return field(rng, first, first + 6, star_weight=6)


def month(rng):
    if rng.randrange(8) == 0:
        return ",".join(sorted(rng.sample(MONTH_NAMES, 2), key=MONTH_NAMES.index))
    return field(rng, 1, 12, star_weight=8)


def expression(rng):
    """Returns (expr, dialect or None)."""
    kind = rng.randrange(20)
    if kind == 0:
        return rng.choice(["@daily", "@hourly", "@weekly", "@monthly", "@yearly"]), None
    if kind == 1:
        return f"@every {rng.randint(1, 90)}m{rng.randint(0, 59)}s", None
    minute = field(rng, 0, 59)
    hour = field(rng, 0, 23)
    dom, dow = day_of_month(rng), day_of_week(rng)
    if rng.randrange(3) and dom != "*" and dow != "*":
        dow = "*"
    if kind < 12:
        return f"{minute} {hour} {dom} {month(rng)} {dow}", None
    second = field(rng, 0, 59, star_weight=1)
    if kind < 16:
        return f"{second} {minute} {hour} {dom} {month(rng)} {dow}", "seconds"
    if kind < 18:
        dow = day_of_week(rng, quartz=True)
        if dom != "?" and dow != "*":
            dom = "?"
        return f"{second} {minute} {hour} {dom} {month(rng)} {dow}", "quartz"
    return f"{second} {minute} {hour} {dom} {month(rng)} {dow} {rng.randint(2026, 2040)}-2399", None


def start(rng):
    t = rng.randint(946684800, 4102444800)  # 2000 - 2100
    from datetime import datetime, timedelta, timezone
    if rng.randrange(4) == 0:
        offset = timedelta(minutes=rng.choice([60, 120, -300, -240, 330, 345, 600]))
        return datetime.fromtimestamp(t, timezone(offset)).isoformat()
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def bad_line(rng, i):
    kind = rng.randrange(4)
    if kind == 0:
        return '{"id": %d, "expr": "0 2 * * *"' % i  # truncated JSON
    if kind == 1:
        return json.dumps({"id": i, "tz": "UTC"})
    if kind == 2:
        return json.dumps({"id": i, "expr": "0 2 * * *", "start": "yesterday"})
    return json.dumps({"id": i, "expr": f"{rng.randint(60, 99)} 2 * * *"})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("count", type=int, nargs="?", default=100000)
    parser.add_argument("--seed", type=int, default=20260329)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    out = sys.stdout
    for i in range(args.count):
        if rng.randrange(100) == 0:
            out.write(bad_line(rng, i) + "\n")
            continue
        expr, dialect = expression(rng)
        case = {"id": i if i % 3 else f"job-{i}", "expr": expr}
        if rng.randrange(5):
            case["tz"] = rng.choice(ZONES)
        case["start"] = start(rng)
        if rng.randrange(2):
            case["n"] = rng.randint(1, 10)
        if dialect is not None:
            case["dialect"] = dialect
        out.write(json.dumps(case, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
