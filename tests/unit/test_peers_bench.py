#!/usr/bin/env python3
"""The arithmetic of hack/bench.sh --parts peers, without a cluster: the pure
helpers of hack/bench/peers/workloads.py (Prometheus sums, per-cluster pod
counts, the seeded contention shapes, a workload's cost per pod) and the jq
programs that turn its result lines into medians, ratios and the Markdown
table (summary.jq, report.jq).

    test_peers_bench.py SOURCE_ROOT
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import unitcheck  # noqa: E402

root = sys.argv[1]
peers = os.path.join(root, "hack", "bench", "peers")
w = unitcheck.load("workloads", os.path.join(peers, "workloads.py"))
check = unitcheck.check


# Prometheus counters, summed by a label.
metrics = """# HELP apiserver_request_total x
apiserver_request_total{code="201",resource="pods",verb="POST"} 3
apiserver_request_total{code="200",resource="pods",verb="PATCH"} 2
apiserver_request_total{code="201",resource="events",verb="POST"} 4
apiserver_request_total_other{verb="POST"} 100
etcd_mvcc_put_total 7.5e+01
"""
check("requests summed by verb", w.prom_sum(metrics, "apiserver_request_total", "verb"), {"POST": 7.0, "PATCH": 2.0})
check("a counter without labels", w.prom_sum(metrics, "etcd_mvcc_put_total"), 75.0)
check("a missing counter is 0", w.prom_sum(metrics, "etcd_mvcc_delete_total"), 0.0)

# Pods by Ray cluster: partly bound is what the contention figure counts.
snap = {
    "a-head-1": {"cluster": "a", "node": "n1", "gated": False},
    "a-w-worker-1": {"cluster": "a", "node": None, "gated": True},
    "b-head-1": {"cluster": "b", "node": "n2", "gated": False},
}
check("pods, bound and gated per cluster", w.by_cluster(snap),
      {"a": {"pods": 2, "bound": 1, "gated": 1}, "b": {"pods": 1, "bound": 1, "gated": 0}})

# The seeded shapes: the same seed, the same clusters; CPU adds up.
s1, s2 = w.contention_shapes(50, 16), w.contention_shapes(50, 16)
check("shapes repeat with their seed", s1, s2)
check("another seed, other shapes", s1 != w.contention_shapes(50, 17), True)
check("a shape's CPU is its head and workers", all(s["cpu"] == 1 + s["workers"] * s["worker_cpu"] for s in s1), True)
check("a shape's pods are its head and workers", all(s["pods"] == 1 + s["workers"] for s in s1), True)

# A workload's cost: differences of counters, per pod.
def point(post, patch, puts, dels, gate_cpu, sched, t):
    return {"apiserver_requests": {"POST": post, "PATCH": patch, "GET": 1}, "etcd": {"put": puts, "delete": dels, "txn": 0},
            "scheduler_attempts": {"scheduled": sched}, "t": t,
            "procs": {"raygate-gate": {"cpu_s": gate_cpu, "rss_kb": 10, "hwm_kb": 12}, "kube-scheduler": {"cpu_s": 1, "rss_kb": 1, "hwm_kb": 1}}}


w.GANG = "raygate"
c = w.cost(point(10, 0, 100, 0, 1.0, 0, 0.0), point(30, 10, 140, 20, 3.5, 10, 5.0), 10)
check("mutating requests per pod", c["apiserver_mutations_per_pod"], 3.0)
check("requests per pod by verb (unchanged verbs left out)", c["apiserver_requests_per_pod"], {"POST": 2.0, "PATCH": 1.0})
check("etcd writes per pod", c["etcd_writes_per_pod"], 6.0)
check("the gang system's CPU", c["gang_cpu_s"], 2.5)
check("scheduler attempts per pod", c["scheduler_attempts_per_pod"], 1.0)

# summary.jq and report.jq on result lines of two systems and three runs.
lines = []
for sysname, secs in (("raygate", [4.0, 6.0, 5.0]), ("none", [2.0, 2.5, 3.0])):
    for run, s in enumerate(secs, 1):
        cost = {"apiserver_requests_per_pod": {"POST": 2}, "apiserver_mutations_per_pod": 3, "etcd_writes_per_pod": 4,
                "gang_cpu_s": 1, "gang_hwm_kb": 2048, "procs": {"kube-scheduler": {"cpu_s": 1}}, "scheduler_attempts_per_pod": 1}
        lines.append({"system": sysname, "run": run, "workload": "flood", "load": "1.0 1.0 1.0",
                      "result": {"clusters": 2, "pods_per_cluster": 10, "all_bound_s": s, "partial_max": 0, "cost": cost}})
        lines.append({"system": sysname, "run": run, "workload": "contention", "load": "1.0 1.0 1.0",
                      "result": {"pods": 10, "ask_cpu": 20, "node_cpu": 10, "ask_over_nodes": 2.0, "settled_s": 5.0, "settled": True,
                                 "quiet": 15, "full_end": 3, "partial_end": run - 1 if sysname == "none" else 0, "partial_max": 1,
                                 "partial_cluster_s": 2, "pending_end": 4, "useful_cpu_share": 0.5, "cpu_in_partial_clusters": 0,
                                 "cost": cost, "samples": [{"t": 1.0}, {"t": 20.0}]}})
    lines.append({"system": sysname, "run": 1, "workload": "walkthrough", "load": "1.0 1.0 1.0",
                  "result": {"cluster0_all_bound_s": 1, "cluster1_while_cluster0_runs": {"pods": 3, "bound": 0 if sysname == "raygate" else 3,
                             "held_whole": sysname == "raygate"}, "cluster1_all_bound_after_delete_s": 1, "cluster1_suspended": False,
                             "describe": {"kind": "pod", "name": "test-cluster-1-head-abcde", "why": "Warning  GangWaiting  5s  raygate  does not fit",
                                          "events": ["Warning  GangWaiting  5s  raygate  does not fit", "Normal  Scheduled  1s  default-scheduler  assigned"]}}})
lines.append({"system": "none", "run": 1, "workload": "gang", "load": "1 1 1", "result": {"error": "boom"}})
lines.append({"system": "raygate", "run": 1, "workload": "rayjob", "load": "1 1 1",
              "result": {"job_a_cluster_bound_s": 2.0, "job_b_while_job_a_runs": {"pods": 3, "bound": 0, "held_whole": True, "suspended": False},
                         "job_b_cluster_bound_after_delete_s": 1.5}})
lines.append({"system": "none", "run": 1, "workload": "rayjob", "load": "1 1 1", "result": {"denied": "no"}})

with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
    f.write("\n".join(json.dumps(l) for l in lines) + "\n")
    path = f.name
args = ["jq", "-s", "-c", "--argjson", "nodes", "2", "--arg", "cap", "cpu=8", "--argjson", "runs", "3", "--argjson", "quick", "1",
        "--argjson", "contention", "10", "--argjson", "flood", "2", "--argjson", "gang", "5", "--argjson", "seed", "16",
        "--arg", "kueue", "v0.13.10", "--arg", "sp", "v0.33.5", "--arg", "systems", "raygate none", "-f", os.path.join(peers, "summary.jq"), path]
summary = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
os.unlink(path)
flood = summary["by_system"]["raygate"]["flood"]["all_bound_s"]
check("flood median, min, max", (flood["median"], flood["min"], flood["max"], flood["n"]), (5.0, 4.0, 6.0, 3))
check("flood ratio to no gang system (medians)", summary["ratios"]["raygate"]["flood_all_bound"], 2.0)
check("partial placements at the end, median", summary["by_system"]["none"]["contention"]["partial_end"]["median"], 1)
check("settled runs", summary["by_system"]["raygate"]["contention"]["settled_runs"], 3)
check("a failed workload is listed, not counted", summary["by_system"]["none"]["errors"], [{"workload": "gang", "run": 1, "error": "boom"}])
check("samples kept apart from the runs", "samples" in json.dumps(summary["runs"]), False)

doc = {"peers": summary, "versions": {"kuberay": "v1.5.1", "kubernetes": "v1.33.13"}}
md = subprocess.run(["jq", "-r", "-f", os.path.join(peers, "report.jq")], input=json.dumps(doc), capture_output=True, text=True, check=True).stdout
check("report: a flood row per system", sum(1 for l in md.splitlines() if l.startswith(("| raygate | 5 (4–6) s", "| no gang system | 2.5 (2–3) s"))), 2)
check("report: the held cluster's reason", "“raygate  does not fit”" in md, True)
check("report: a cluster not held says so", "**not held**: 3 of 3 pods bound" in md, True)
check("report: the error is shown", "no gang system gang run 1: boom" in md, True)
check("report: a RayJob held whole, then placed", "| raygate | 2 s | held whole: 3 pods, 0 bound | cluster all bound in 1.5 s |" in md, True)
check("report: a RayJob denied", "| no gang system | **denied**: no | – | – |" in md, True)

print(f"{unitcheck.failures} failed" if unitcheck.failures else "all peers bench checks passed")
sys.exit(1 if unitcheck.failures else 0)
