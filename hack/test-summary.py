#!/usr/bin/env python3
"""hack/test.sh's summary: counts the results in meson's JSON test logs.

  hack/test-summary.py [--e2e-plan PLAN] [--durations FILE] LOG...

A LOG that does not exist counts as one failure: a suite (or an e2e shard)
that did not run is a failure, never a silent skip. --e2e-plan adds the logs
of hack/e2e.sh's plan (hack/e2e-shards.py's lines, in the folder of the
logs): e2e-K.json for each shard K with e2e tests, incluster.json when a
shard has +incluster, oldest.json when one has +oldest; together the shards' logs must hold each e2e test of
the plan exactly once (one missing, run twice or not planned: a failure),
and a missing PLAN is a failure. --durations writes the seconds of every e2e
and in-cluster test of these logs to FILE, in the format of
tests/e2e/durations.txt. Prints "P passed, F failed, S skipped"; exits 1
when F is not 0.
"""
import collections
import json
import os
import sys


def read_plan(path):
    """(the shards' logs, the e2e tests planned) of hack/e2e.sh's PLAN."""
    logs, tests = [], []
    folder = os.path.dirname(path)
    with open(path) as f:
        for k, line in enumerate(f, 1):
            words = line.split()[1:]
            for extra in ("+incluster", "+oldest"):
                if extra in words:
                    logs.append(os.path.join(folder, extra[1:] + ".json"))
                    words.remove(extra)
            if words:
                logs.append(os.path.join(folder, f"e2e-{k}.json"))
            tests += words
    return logs, tests


def main(argv):
    args = argv[1:]
    plan, durations_out = None, None
    while args and args[0] in ("--e2e-plan", "--durations"):
        if len(args) < 2:
            print(__doc__.split("\n\n")[1], file=sys.stderr)
            return 2
        if args[0] == "--e2e-plan":
            plan = args[1]
        else:
            durations_out = args[1]
        args = args[2:]
    expect = None
    if plan is not None:
        if os.path.exists(plan):
            shard_logs, expect = read_plan(plan)
            args += shard_logs
        else:
            args.append(plan)  # counted as a suite that did not run
    ok = fail = skip = 0
    ran = collections.Counter()
    durations = []
    for path in args:
        if not os.path.exists(path):
            print(f"summary: {path} is missing: that suite did not run", file=sys.stderr)
            fail += 1
            continue
        shard = os.path.basename(path).startswith("e2e-")
        for line in open(path):
            entry = json.loads(line)
            r = entry["result"]
            if r in ("OK", "EXPECTEDFAIL"):
                ok += 1
            elif r == "SKIP":
                skip += 1
            else:
                fail += 1
            name = entry["name"].split(" / ", 1)[-1]
            if shard:
                ran[name] += 1
            if shard or os.path.basename(path).startswith(("incluster", "oldest")):
                durations.append(f"{name:<26} {round(entry['duration'])}")
    if expect is not None:
        missing = [t for t in expect if ran[t] == 0]
        twice = [t for t in expect if ran[t] > 1]
        extra = sorted(set(ran) - set(expect))
        for what, tests in (("did not run", missing), ("ran more than once", twice), ("ran but was not planned", extra)):
            if tests:
                print(f"summary: e2e tests that {what}: {' '.join(tests)}", file=sys.stderr)
        fail += len(missing) + len(twice) + len(extra)
    if durations_out and durations:
        with open(durations_out, "w") as f:
            f.write("\n".join(durations) + "\n")
    print(f"{ok} passed, {fail} failed, {skip} skipped")
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
