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

# The audit log: who sent each mutating request, by user agent; reads, other
# stages and lines that are not events are not counted.
check("raygate's gate by its agent", w.audit_component({"userAgent": "raygate/0.9.0"}), "raygate")
check("KubeRay by its agent", w.audit_component({"userAgent": "kuberay-operator/v1.5.1"}), "kuberay")
check("KubeRay by its program's name", w.audit_component({"userAgent": "ray-operator/v0.0.0 (linux/amd64) kubernetes/$Format"}), "kuberay")
check("a controller-manager controller", w.audit_component({"userAgent": "kube-controller-manager/v1.33.13 (linux/amd64) kubernetes/abc/generic-garbage-collector"}),
      "kube-controller-manager")
check("scheduler-plugins' scheduler is the scheduler", w.audit_component({"userAgent": "scheduler/v0.0.0 (linux/amd64) kubernetes/$Format/scheduler"}), "kube-scheduler")
check("an unknown agent stands for itself", w.audit_component({"userAgent": "helm/3.18"}), "helm")
check("no agent: the user", w.audit_component({"user": {"username": "raygate-admin"}}), "raygate-admin")


def event(agent, verb, resource, sub=None, stage="ResponseComplete"):
    ref = {"resource": resource, "namespace": "ns"}
    if sub:
        ref["subresource"] = sub
    return json.dumps({"kind": "Event", "stage": stage, "verb": verb, "userAgent": agent, "objectRef": ref})


audit_lines = [
    event("raygate/0.9.0", "patch", "pods"), event("raygate/0.9.0", "patch", "pods"),
    event("raygate/0.9.0", "update", "podgroups", "status"), event("raygate/0.9.0", "create", "events"),
    event("ray-operator/v1", "create", "pods"), event("ray-operator/v1", "create", "pods"),
    event("kube-scheduler/v1.33 (linux) k/scheduler", "create", "pods", "binding"),
    event("kube-scheduler/v1.33 (linux) k/scheduler", "create", "pods", "binding", stage="RequestReceived"),
    event("kwok/v0.7.0", "get", "pods"), "not json", "",
]
counts = w.audit_count(audit_lines)
check("audit counts by component and request", counts, {
    "raygate": {"patch pods": 2, "update podgroups/status": 1, "create events": 1},
    "kuberay": {"create pods": 2}, "kube-scheduler": {"create pods/binding": 1}})
ac = w.audit_cost(counts, 2)
check("audit: mutating requests per Ray pod", ac["mutations_per_pod"], 3.5)
check("audit: per Ray pod by component", ac["by_component"], {"kube-scheduler": 0.5, "kuberay": 1.0, "raygate": 2.0})
check("audit: per Ray pod by request", ac["by_request"]["raygate"], {"create events": 0.5, "patch pods": 1.0, "update podgroups/status": 0.5})
check("audit: no log, no figures", w.audit_cost(None, 2), None)

# Reading the log between two points: whole lines after the first point only.
with tempfile.TemporaryDirectory() as d:
    log_path = os.path.join(d, "audit.log")
    check("audit: no log yet", w.audit_read(log_path), (None, None))
    with open(log_path, "w") as f:
        f.write(audit_lines[0] + "\n" + audit_lines[4] + "\n")
    _, at = w.audit_read(log_path)
    check("audit: the point before is the end", at, os.path.getsize(log_path))
    with open(log_path, "a") as f:
        f.write(audit_lines[2] + "\n" + audit_lines[6] + "\n" + audit_lines[1][:20])
    got, end = w.audit_read(log_path, at)
    check("audit: only what came after, whole lines", got, {"raygate": {"update podgroups/status": 1}, "kube-scheduler": {"create pods/binding": 1}})
    check("audit: read up to the partial line", end, os.path.getsize(log_path) - 20)
    with open(log_path, "w") as f:
        f.write(audit_lines[0] + "\n")
    check("audit: a rotated log gives no figures", w.audit_read(log_path, end)[0], None)

c2 = w.cost(dict(point(10, 0, 100, 0, 1.0, 0, 0.0), procs={"kube-apiserver": {"cpu_s": 2.0, "rss_kb": 1, "hwm_kb": 1}}),
            dict(point(30, 10, 140, 20, 3.5, 10, 5.0), procs={"kube-apiserver": {"cpu_s": 7.0, "rss_kb": 1, "hwm_kb": 1}}, audit=counts), 10)
check("apiserver CPU seconds per Ray pod", c2["apiserver_cpu_s_per_pod"], 0.5)
check("the cost carries the audit figures", c2["audit"]["by_component"]["raygate"], 0.4)
check("no apiserver process, no CPU figure", c["apiserver_cpu_s_per_pod"], None)

# summary.jq and report.jq on result lines of two systems and three runs.
lines = []
for sysname, secs in (("raygate", [4.0, 6.0, 5.0]), ("none", [2.0, 2.5, 3.0])):
    for run, s in enumerate(secs, 1):
        # Audit figures: raygate's gate writes 1, 3, 2 per pod; KubeRay 1; kwok only in run 2 (0 in the others).
        by_comp = {"kuberay": 1.0, "kube-scheduler": 1.0}
        by_req = {"kuberay": {"create pods": 1.0}, "kube-scheduler": {"create pods/binding": 1.0}}
        if sysname == "raygate":
            by_comp["raygate"] = [1.0, 3.0, 2.0][run - 1]
            by_req["raygate"] = {"patch pods": 1.0, "create events": by_comp["raygate"] - 1}
        if run == 2:
            by_comp["helm"], by_req["helm"] = 0.3, {"create secrets": 0.3}
        audit = {"mutations_per_pod": sum(by_comp.values()), "by_component": by_comp, "by_request": by_req}
        cost = {"apiserver_requests_per_pod": {"POST": 2}, "apiserver_mutations_per_pod": 3, "etcd_writes_per_pod": 4,
                "gang_cpu_s": 1, "gang_hwm_kb": 2048, "procs": {"kube-scheduler": {"cpu_s": 1}}, "scheduler_attempts_per_pod": 1,
                "apiserver_cpu_s_per_pod": 0.001 * run, "audit": audit}
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
rf = summary["by_system"]["raygate"]["flood"]
check("apiserver CPU per pod: median, min, max", (rf["apiserver_cpu_s_per_pod"]["median"], rf["apiserver_cpu_s_per_pod"]["min"],
                                                  rf["apiserver_cpu_s_per_pod"]["max"]), (0.002, 0.001, 0.003))
check("audit mutations per pod, median", rf["audit_mutations_per_pod"]["median"], 4.0)
check("by component: the gate's median, min, max", rf["mutations_by_component"]["raygate"], {"median": 2.0, "min": 1.0, "max": 3.0, "n": 3})
check("by component: a run without it counts 0", rf["mutations_by_component"]["helm"]["median"], 0)
check("by request: medians per component", rf["mutations_by_request"]["raygate"], {"create events": 1.0, "patch pods": 1.0})
check("no gang system: no raygate column", "raygate" in summary["by_system"]["none"]["flood"]["mutations_by_component"], False)
check("contention carries the apiserver cost too", summary["by_system"]["none"]["contention"]["apiserver_cpu_s_per_pod"]["median"], 0.002)

doc = {"peers": summary, "versions": {"kuberay": "v1.5.1", "kubernetes": "v1.33.13"}}
md = subprocess.run(["jq", "-r", "-f", os.path.join(peers, "report.jq")], input=json.dumps(doc), capture_output=True, text=True, check=True).stdout
check("report: a flood row per system", sum(1 for l in md.splitlines() if l.startswith(("| raygate | 5 (4–6) s", "| no gang system | 2.5 (2–3) s"))), 2)
check("report: apiserver CPU per pod in ms", "| 3 | 2 (1–3) ms | 4 |" in md, True)
check("report: the by-component header", "| system | workload | raygate gate | Kueue | PodGroup controller | KubeRay | scheduler | controller-manager | kwok (kubelet) | bench client | other | total |" in md, True)
check("report: raygate's flood row by component", "| raygate | flood | 2 | – | – | 1 | 1 | – | – | – | 0 | 4 (3–5.3) |" in md, True)
check("report: no gang system's flood row", "| no gang system | flood | – | – | – | 1 | 1 | – | – | – | 0 | 2 (2–2.3) |" in md, True)
check("report: which requests, largest first", "raygate: raygate gate create events 1, patch pods 1; KubeRay create pods 1; scheduler create pods/binding 1." in md, True)
check("report: no by-component row without audit figures", "| no gang system | gang |" in md, False)
check("report: which requests, flood only (no gang figures)", ("Which requests (flood" in md, "Which requests (gang" in md), (True, False))
check("report: the held cluster's reason", "“raygate  does not fit”" in md, True)
check("report: a cluster not held says so", "**not held**: 3 of 3 pods bound" in md, True)
check("report: the error is shown", "no gang system gang run 1: boom" in md, True)
check("report: a RayJob held whole, then placed", "| raygate | 2 s | held whole: 3 pods, 0 bound | cluster all bound in 1.5 s |" in md, True)
check("report: a RayJob denied", "| no gang system | **denied**: no | – | – |" in md, True)

print(f"{unitcheck.failures} failed" if unitcheck.failures else "all peers bench checks passed")
sys.exit(1 if unitcheck.failures else 0)
