#!/usr/bin/env python3
"""hack/test.sh's e2e shards without a cluster: the split of hack/e2e-shards.py
(every e2e test in exactly one shard, shards about equal, a test missing from
tests/e2e/durations.txt still placed, the in-cluster suite one item of the
split) on this build's suites and on made-up ones, and hack/test-summary.py's
counting of the shards' logs (a shard's log missing, a planned test that did
not run or ran twice: failures).

    test_e2e_shards.py SOURCE_ROOT BUILD_ROOT
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import unitcheck  # noqa: E402

root, build = sys.argv[1], sys.argv[2]
hack = os.path.join(root, "hack")
shards = unitcheck.load("e2e_shards", os.path.join(hack, "e2e-shards.py"))
check = unitcheck.check


def run(*args):
    p = subprocess.run([sys.executable, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


# This build's e2e suite, split by the script as hack/e2e.sh calls it.
e2e = shards.suite_tests(build, "e2e")
incluster = shards.suite_tests(build, "incluster")
check("this build has e2e tests", len(e2e) > 10, True)
table = shards.read_table(shards.TABLE)
oldest = shards.suite_tests(build, "oldest")
check("this build has an oldest-version suite", len(oldest) > 0, True)
for n in (1, 2, 3, 5):
    for flag in ([], ["--incluster"], ["--incluster", "--oldest"]):
        rc, out, err = run(os.path.join(hack, "e2e-shards.py"), build, str(n), *flag)
        lines = [l.split() for l in out.splitlines()]
        placed = [t for l in lines for t in l[1:] if t not in ("+incluster", "+oldest")]
        check(f"{n} shards {flag}: exit 0", rc, 0)
        check(f"{n} shards {flag}: {n} lines", len(lines), n)
        check(f"{n} shards {flag}: every e2e test once", sorted(placed), sorted(e2e))
        check(f"{n} shards {flag}: in-cluster suite in one shard",
              sum(l.count("+incluster") for l in lines), 1 if flag and incluster else 0)
        check(f"{n} shards {flag}: oldest-version suite in one shard, after +incluster",
              (sum(l.count("+oldest") for l in lines), all(l.index("+oldest") == 1 + ("+incluster" in l) for l in lines if "+oldest" in l)),
              (1 if "--oldest" in flag else 0, True))
        est = [int(l[0]) for l in lines]
        longest = max([table.get(t, shards.DEFAULT_S) for t in e2e] + [0])
        check(f"{n} shards {flag}: estimates within the longest test of each other ({est})",
              max(est) - min(est) <= longest, True)

rc, out, err = run(os.path.join(hack, "e2e-shards.py"), build, "2", "cli", "webhook")
check("TESTs: only those, one in each shard", sorted(l.split()[1] for l in out.splitlines()), ["cli", "webhook"])
rc, out, err = run(os.path.join(hack, "e2e-shards.py"), build, "2", "no_such_test")
check("an unknown TEST: exit 1", (rc, "no_such_test" in err), (1, True))
rc, out, err = run(os.path.join(hack, "e2e-shards.py"), build, "0")
check("0 shards: usage, exit 2", rc, 2)

# Made-up suites: a test with no duration is placed, at DEFAULT_S; more shards than items.
t = {"a": 100, "b": 60, "c": 50, "d": 10, "x1": 20, "x2": 30, "real_node_up": 40}
plan = shards.plan(["a", "b", "c", "d", "new"], {"+incluster": (["x1", "x2"], "real_node_up")}, t, 2)
check("made up: split", plan, [(170, [], ["a", "d", "new"]), (200, ["+incluster"], ["b", "c"])])
check("made up: more shards than items: one shard each", len(shards.plan(["a", "b"], {}, t, 4)), 2)
t2 = dict(t, o1=70, oldest_up=30)
plan = shards.plan(["a", "b"], {"+incluster": (["x1", "x2"], "real_node_up"), "+oldest": (["o1"], "oldest_up")}, t2, 2)
check("made up: both extras, each a job", plan, [(190, ["+incluster"], ["a"]), (160, ["+oldest"], ["b"])])

# The summary over a plan and the shards' logs.
with tempfile.TemporaryDirectory() as d:
    def log(name, *tests, result="OK"):
        with open(os.path.join(d, name), "w") as f:
            for x in tests:
                f.write(json.dumps({"name": f"raygate:e2e / {x}", "result": result, "duration": 1.4}) + "\n")

    planf = os.path.join(d, "e2e-plan.txt")
    with open(planf, "w") as f:
        f.write("10 a b\n12 +incluster +oldest c\n")
    summary = os.path.join(hack, "test-summary.py")
    log("e2e-1.json", "a", "b")
    log("e2e-2.json", "c")
    log("incluster.json", "i1", "i2")
    log("oldest.json", "oldest_a")
    dur = os.path.join(d, "durations.txt")
    rc, out, err = run(summary, "--e2e-plan", planf, "--durations", dur)
    check("summary: all ran", (rc, out.strip()), (0, "6 passed, 0 failed, 0 skipped"))
    check("summary: durations written", open(dur).read().split("\n")[0].split(), ["a", "1"])
    os.remove(os.path.join(d, "incluster.json"))
    rc, out, err = run(summary, "--e2e-plan", planf)
    check("summary: the in-cluster suite's log missing", (rc, out.strip()), (1, "4 passed, 1 failed, 0 skipped"))
    os.remove(os.path.join(d, "oldest.json"))
    rc, out, err = run(summary, "--e2e-plan", planf)
    check("summary: the oldest-version suite's log missing too", (rc, out.strip()), (1, "3 passed, 2 failed, 0 skipped"))
    log("oldest.json", "oldest_a")
    log("incluster.json", "i1")
    log("e2e-2.json", "c", "b")
    rc, out, err = run(summary, "--e2e-plan", planf)
    check("summary: b ran twice", (rc, out.strip(), "ran more than once: b" in err), (1, "6 passed, 1 failed, 0 skipped", True))
    os.remove(os.path.join(d, "e2e-2.json"))
    rc, out, err = run(summary, "--e2e-plan", planf)
    check("summary: shard 2 did not run", (rc, out.strip(), "did not run: c" in err), (1, "4 passed, 2 failed, 0 skipped", True))
    log("e2e-2.json", "c", result="FAIL")
    rc, out, err = run(summary, "--e2e-plan", planf)
    check("summary: c failed", (rc, out.strip()), (1, "4 passed, 1 failed, 0 skipped"))
    rc, out, err = run(summary, "--e2e-plan", os.path.join(d, "no-plan.txt"))
    check("summary: no plan (hack/e2e.sh did not run)", (rc, out.strip()), (1, "0 passed, 1 failed, 0 skipped"))

sys.exit(1 if unitcheck.failures else 0)
