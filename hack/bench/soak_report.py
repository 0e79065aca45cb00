#!/usr/bin/env python3
"""The soak's report (hack/bench/soak.sh): JSON and markdown from what the run left in its folder.

  soak_report.py --dir DIR --json OUT.json --md OUT.md   writes both; exit 0
  soak_report.py --markdown OUT.json                     prints the markdown of a report (hack/bench.sh)
  soak_report.py --self-test FIXTURE-DIR                 the report of FIXTURE-DIR/run against FIXTURE-DIR/expected.json

DIR holds (hack/bench/soak_actions.sh's soak_collect writes them):
  run.json            seed, minutes, times, namespace, queue prefix, a harness failure ("" when none)
  harness.tsv         KEY<TAB>N of what the harness did (created-WHERE-KIND, deleted, scaled-up, cuts, partitions-seen, ...)
  objects.tsv         WHERE<TAB>KIND<TAB>NAME<TAB>UID of every object it created
  bank                "WHO:KEY VALUE" lines: the gates' (a, b) and the dispatcher's (m) counters, each scraped before
                      the process was killed and at the end, the baseline at the start negated; their sums are counts
  inv-W.violations    invariants.py's JSON lines on worker W; inv-W.final its last status; inv-W.alive when it ran to the end
  samp.violations     dispatch_sampler.py's JSON lines (one per poll that saw a gang bound in two clusters); samp.status
                      ("ever": the workers each gang was ever bound in); samp.alive
  settled-W.txt, .rc  invariants.py --settled on worker W at the end (exit 3: a gang that fits waits)
  gate-W.log, dispatch.log  the gates' and the dispatcher's log lines written during the run
  not-quiet           present when the workers never went quiet after the churn
"""
import argparse
import json
import os
import re
import sys

OBJECT = re.compile(r"\b(pod|RayCluster|queue|under) ([A-Za-z0-9][\w.-]*(?:/[\w.-]+)?)")
NS_NAME = re.compile(r"(?<![\w./-])([a-z][a-z0-9-]*/[\w.-]+)")  # a bare NAMESPACE/NAME: a pod a queue's message lists
KINDS = {"rayclusters.ray.io": "RayCluster", "rayjobs.ray.io": "RayJob"}
SETTLED = re.compile(r"^SETTLED CHECK FAILED \[([\w-]+)\]: (.*)$")


def read(d, name, default=""):
    try:
        with open(os.path.join(d, name)) as f:
            return f.read()
    except OSError:
        return default


def json_lines(text):
    out = []
    for line in text.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def objects_in(message):
    """The objects a checker's message names (pod NS/NAME, RayCluster NS/NAME, queue NAME, under PARENT)."""
    seen = []
    for kind, name in OBJECT.findall(message):
        if name == "the" or name.endswith(":"):
            continue
        obj = ("Queue" if kind in ("queue", "under") else kind) + " " + name.rstrip(":,")
        if obj not in seen:
            seen.append(obj)
    named = {o.split(" ", 1)[1] for o in seen}
    seen += ["pod " + n for n in NS_NAME.findall(message) if n not in named]
    return seen


def bank_sums(text):
    sums = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            sums[parts[0]] = sums.get(parts[0], 0) + float(parts[1])
    return {k: int(round(v)) for k, v in sums.items()}


def log_starts(text, program):
    """How many times PROGRAM logged that it started (JSON log lines)."""
    pat = re.compile(r"^%s \S+ started\b" % re.escape(program))
    return sum(1 for rec in json_lines(text) if pat.match(str(rec.get("msg", ""))))


def per_worker(sums, key):
    d = {w: sums.get("%s:%s" % (w, key), 0) for w in ("a", "b")}
    return dict(total=d["a"] + d["b"], **d)


def counts(d, run):
    h = {}
    for line in read(d, "harness.tsv").splitlines():
        k, _, v = line.partition("\t")
        if v:
            h[k] = int(v)
    sums = bank_sums(read(d, "bank"))
    created = {k[len("created-"):]: v for k, v in sorted(h.items()) if k.startswith("created-")}
    evicted = {}
    for k, v in sums.items():
        if ":evicted:" in k:
            reason = k.split(":evicted:", 1)[1]
            evicted[reason] = evicted.get(reason, 0) + v
    ever = json.loads(read(d, "samp.status") or "{}").get("ever", {})
    gates = {w: max(0, log_starts(read(d, "gate-%s.log" % w), "raygate-gate")) for w in ("a", "b")}
    return {
        "created": dict(total=sum(created.values()), **created, topology=h.get("topology", 0),
                        refused=h.get("create-refused", 0)),
        "admitted": per_worker(sums, "admitted"),
        "evicted": dict(total=sum(evicted.values()), **evicted),
        "preempted": per_worker(sums, "preempt"),
        "reclaimed": per_worker(sums, "reclaim"),
        "redispatched": {"total": sums.get("m:redispatch", 0) + sums.get("m:withdraw", 0),
                         "lost": sums.get("m:redispatch", 0), "withdrawn": sums.get("m:withdraw", 0)},
        "moved": sum(1 for ws in ever.values() if len(ws) > 1),
        "gate_restarts": dict(total=gates["a"] + gates["b"], **gates,
                              killed=h.get("gate-killed-a", 0) + h.get("gate-killed-b", 0)),
        "dispatcher_restarts": dict(total=log_starts(read(d, "dispatch.log"), "raygate-dispatch"),
                                    killed=h.get("dispatcher-killed", 0)),
        "partitions": dict(total=h.get("partitions-seen", 0), cuts=h.get("cuts", 0)),
        "deleted": h.get("deleted", 0),
        "scaled_up": h.get("scaled-up", 0),
        "scaled_down": h.get("scaled-down", 0),
        "steps": h.get("steps", 0),
    }


def sampler_violations(d, run):
    names = {}
    for line in read(d, "objects.tsv").splitlines():
        parts = line.split("\t")
        if len(parts) == 4:
            names[parts[3]] = "%s %s/%s (uid %s, created on %s)" % (KINDS.get(parts[1], parts[1]), run.get("namespace"),
                                                                   parts[2], parts[3], parts[0])
    by_uid = {}
    for v in json_lines(read(d, "samp.violations")):
        u = v.get("origin_uid", "")
        x = by_uid.setdefault(u, {"clause": "bound-twice", "worker": ",".join(v.get("workers", [])),
                                  "objects": [names.get(u, "manager object uid " + u)], "first_t": v.get("t"), "samples": 0})
        x["samples"] += 1
        x["last_t"] = v.get("t")
    for x in by_uid.values():
        x["message"] = "%s bound in %s at once in %d sample(s) of 0.5 s" % (x["objects"][0], x["worker"], x["samples"])
    return list(by_uid.values())


def violations(d, run):
    out = []
    for w in ("a", "b"):
        for v in json_lines(read(d, "inv-%s.violations" % w)):
            out.append({"clause": v.get("kind"), "worker": w, "objects": objects_in(v.get("message", "")),
                        "message": v.get("message"), "t": v.get("t")})
    out += sampler_violations(d, run)
    for w in ("a", "b"):
        rc = read(d, "settled-%s.rc" % w).strip()
        text = read(d, "settled-%s.txt" % w)
        for line in text.splitlines():
            m = SETTLED.match(line)
            if m:
                out.append({"clause": m.group(1), "worker": w, "objects": objects_in(m.group(2)), "message": m.group(2)})
        if rc not in ("0", "3"):
            out.append({"clause": "settled-check", "worker": w, "objects": [],
                        "message": "the settled check did not run to its end (exit %s): %s" % (rc or "none", text.strip()[-300:])})
    for w in ("a", "b"):
        st = json.loads(read(d, "inv-%s.final" % w) or "{}")
        if not st.get("polls") or not read(d, "inv-%s.alive" % w):
            out.append({"clause": "checker-stopped", "worker": w, "objects": [],
                        "message": "the invariant checker on %s stopped or never polled (%s polls)" % (w, st.get("polls", 0))})
    if not json.loads(read(d, "samp.status") or "{}").get("polls") or not read(d, "samp.alive"):
        out.append({"clause": "checker-stopped", "worker": "a,b", "objects": [],
                    "message": "the dispatch sampler stopped or never polled"})
    if read(d, "not-quiet"):
        out.append({"clause": "not-quiet", "worker": "a,b", "objects": [], "message": read(d, "not-quiet").strip()})
    if run.get("harness_failure"):
        out.append({"clause": "harness", "worker": "", "objects": [], "message": run["harness_failure"]})
    return out


def checks(d):
    out = {}
    for name, f in (("invariants_a", "inv-a.final"), ("invariants_b", "inv-b.final"), ("sampler", "samp.status")):
        st = json.loads(read(d, f) or "{}")
        out[name] = {"polls": st.get("polls", 0), "failed_polls": st.get("errors", 0)}
    sums = bank_sums(read(d, "bank"))
    out["metric_scrapes"] = {w: sums.get(w + ":scrapes", 0) for w in ("a", "b", "m")}
    return out


def report(d):
    run = json.loads(read(d, "run.json") or "{}")
    return dict(run, counts=counts(d, run), checks=checks(d), violations=violations(d, run))


def total(v):
    return v["total"] if isinstance(v, dict) else v


def detail(v):
    if not isinstance(v, dict):
        return ""
    return ", ".join("%s %s" % (k, x) for k, x in v.items() if k != "total")


def markdown(r):
    lines = ["### Soak: %s min, seed %s" % (r.get("minutes"), r.get("seed")), "",
             "`%s`; raygate %s; %s to %s (%s s, of which %s s of churn); namespace `%s`; offsets %s; load average at the "
             "end %s. Replay: `RAYGATE_SOAK_SEED=%s`." % (
                 "hack/bench/soak.sh " + r.get("args", ""), r.get("raygate"), r.get("started"), r.get("ended"),
                 r.get("wall_s"), r.get("churn_s"), r.get("namespace"), r.get("offsets"), r.get("load_average_end"),
                 r.get("seed")), "",
             "| count | total | detail |", "|---|---|---|"]
    for k, v in r["counts"].items():
        lines.append("| %s | %s | %s |" % (k, total(v), detail(v)))
    polls = {k: v for k, v in r["checks"].items() if "polls" in v}
    lines += ["", "Checkers: %s. Metric scrapes (before each kill and at the end): %s." % (
        "; ".join("%s %d polls (%d failed)" % (k, v["polls"], v["failed_polls"]) for k, v in polls.items()),
        ", ".join("%s %d" % kv for kv in r["checks"].get("metric_scrapes", {}).items())), ""]
    v = r["violations"]
    lines.append("**Violations: %d.**" % len(v) if v else "**Violations: none.**")
    for x in v:
        lines.append("- `%s` on %s: %s%s" % (x["clause"], x["worker"] or "-", x["message"],
                                             " (objects: %s)" % ", ".join(x["objects"]) if x["objects"] else ""))
    return "\n".join(lines) + "\n"


def self_test(fixtures):
    got = report(os.path.join(fixtures, "run"))
    with open(os.path.join(fixtures, "expected.json")) as f:
        want = json.load(f)
    fails = 0
    for k in want:
        if got.get(k) != want[k]:
            fails += 1
            print("FAIL: %s: expected %s, got %s" % (k, json.dumps(want[k]), json.dumps(got.get(k))))
    print("soak_report self-test: %d keys, %d failed" % (len(want), fails))
    return 1 if fails else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir")
    ap.add_argument("--json")
    ap.add_argument("--md")
    ap.add_argument("--markdown", help="a report's JSON: print its markdown")
    ap.add_argument("--self-test", metavar="FIXTURE-DIR")
    args = ap.parse_args()
    if args.self_test:
        return self_test(args.self_test)
    if args.markdown:
        with open(args.markdown) as f:
            sys.stdout.write(markdown(json.load(f)))
        return 0
    if not (args.dir and args.json and args.md):
        ap.error("--dir, --json and --md are required")
    r = report(args.dir)
    with open(args.json, "w") as f:
        json.dump(r, f, indent=1)
        f.write("\n")
    with open(args.md, "w") as f:
        f.write(markdown(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
