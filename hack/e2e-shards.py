#!/usr/bin/env python3
"""Splits the e2e suite into N shards of about equal time, for hack/test.sh to
run side by side, each against its own local cluster.

  hack/e2e-shards.py BUILD N [--incluster] [--oldest] [TEST...]

The tests are those of the meson suite e2e in BUILD (meson-info/intro-tests.json,
i.e. tests/e2e/meson.build), or only the TESTs named: a test added there lands
in a shard with no other step. Their durations come from tests/e2e/durations.txt; a test missing there
is assumed to take DEFAULT_S and named on stderr (add it with its time). Each
test goes to exactly one shard: longest first, to the shard with the least
work so far. With --incluster the in-cluster suite (its tests plus
real_node_up) is one more job, put in a shard like a test; that shard runs it
after its e2e tests, on a real-node cluster of its own. With --oldest the
oldest-version suite (its tests, on Kubernetes and KubeRay's oldest supported
releases, plus oldest_up) is one more job likewise: its shard runs it on a
cluster of those releases after its other jobs.

The tests of a GROUPS prefix (dispatch_: the many-cluster tests, which bring
up a worker and a manager beside the shard's cluster at its offset + 20 and +
40, tests/e2e/multi.sh) are one job, in one shard: hack/e2e.sh leaves the
next offset free after that shard.

Prints one line per shard: its estimated seconds, then `+incluster` and
`+oldest` when it has those suites, then its e2e tests in meson.build order. Exits 2 on
a usage error, 1 when there is no e2e test to run or a TEST is not one.
"""
import json
import os
import sys

DEFAULT_S = 60  # a test with no recorded duration
GROUPS = ("dispatch_",)  # tests of one prefix run in one shard
TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e", "durations.txt")


def read_table(path):
    """name -> seconds, from the 'name seconds' lines of the table."""
    table = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            try:
                name, secs = line.split()
                table[name] = int(secs)
            except ValueError:
                sys.exit(f"{path}:{n}: want 'name seconds', got: {line}")
    return table


def suite_tests(build, suite):
    """The names of the tests of SUITE, in meson.build order."""
    with open(os.path.join(build, "meson-info", "intro-tests.json")) as f:
        tests = json.load(f)
    return [t["name"] for t in tests if any(s.split(":")[-1] == suite for s in t["suite"])]


def duration(table, name, missing):
    if name in table:
        return table[name]
    missing.append(name)
    return DEFAULT_S


EXTRA = ("+incluster", "+oldest")  # suites run after a shard's e2e tests, on a cluster of their own


def plan(e2e, extra, table, n):
    """[(seconds, [extras], [tests])] for N shards; each e2e test in exactly one; each
    suite of EXTRA ({'+incluster': (its tests, its cluster's start-up name)}) one job."""
    missing = []
    jobs, grouped = [], {}
    for i, t in enumerate(e2e):
        group = next((g for g in GROUPS if t.startswith(g)), None)
        if group is None:
            jobs.append((duration(table, t, missing), i, t))
        else:
            grouped.setdefault(group, []).append((duration(table, t, missing), i, t))
    for group, members in grouped.items():
        jobs.append((sum(m[0] for m in members), min(m[1] for m in members), "+group:" + group))
    for name, (tests, up) in extra.items():
        if tests:
            secs = sum(duration(table, t, missing) for t in tests) + table.get(up, 0)
            jobs.append((secs, len(e2e) + EXTRA.index(name), name))
    if missing:
        print(f"e2e-shards: no duration in tests/e2e/durations.txt for {', '.join(missing)}: "
              f"assumed {DEFAULT_S} s each (add them, with their time from the last run)", file=sys.stderr)
    shards = [[0, []] for _ in range(min(n, len(jobs)))]
    for secs, order, name in sorted(jobs, key=lambda j: (-j[0], j[1])):
        least = min(shards, key=lambda s: s[0])
        least[0] += secs
        least[1].append((order, name))
    out = []
    for secs, members in shards:
        names = [name for _, name in sorted(members)]
        names = [t for name in names for t in (
            [m for m in e2e if m.startswith(name[len("+group:"):])] if name.startswith("+group:") else [name])]
        out.append((secs, [x for x in EXTRA if x in names], [m for m in names if m not in EXTRA]))
    placed = [t for _, _, tests in out for t in tests]
    assert sorted(placed) == sorted(e2e), "every e2e test in exactly one shard"
    return out


def main(argv):
    args = [a for a in argv[1:] if a not in ("--incluster", "--oldest")]
    if len(args) < 2 or not args[1].isdigit() or int(args[1]) < 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    build, n, only = args[0], int(args[1]), args[2:]
    e2e = suite_tests(build, "e2e")
    unknown = sorted(set(only) - set(e2e))
    if unknown:
        print(f"e2e-shards: not tests of suite e2e: {' '.join(unknown)}", file=sys.stderr)
        return 1
    incluster = suite_tests(build, "incluster")
    oldest = suite_tests(build, "oldest")
    table = read_table(TABLE)
    stale = sorted(set(table) - set(e2e) - set(incluster) - set(oldest) - {"real_node_up", "oldest_up"})
    if stale:
        print(f"e2e-shards: tests/e2e/durations.txt names tests that do not exist: {', '.join(stale)}", file=sys.stderr)
    if only:
        e2e = [t for t in e2e if t in only]
    if not e2e:
        print(f"e2e-shards: no test of suite e2e in {build}", file=sys.stderr)
        return 1
    extra = {}
    if "--incluster" in argv:
        extra["+incluster"] = (incluster, "real_node_up")
    if "--oldest" in argv:
        extra["+oldest"] = (oldest, "oldest_up")
    for secs, extras, tests in plan(e2e, extra, table, n):
        print(" ".join([str(secs)] + extras + tests))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
