#!/usr/bin/env python3
"""The Ray workloads of hack/bench.sh --parts peers (docs/benchmarks.md), run against the
local control plane of hack/cluster.sh up --gang G. The objects are the same
for every gang system; only the opt-in label (and the queue objects the system
reads) differ. Each subcommand prints one JSON object on stdout.

  workloads.py walkthrough
  workloads.py contention --clusters 50 --seed 16 --limit 240
  workloads.py flood --clusters 200 --pods 10
  workloads.py gang --pods 1000
  workloads.py autoscaling
  workloads.py rayjob
  workloads.py shapes --clusters 50 --seed 16     (the contention shapes' CPU sum)

Environment: RAYGATE_STATE (the cluster's state folder), RAYGATE_APISERVER_PORT,
RAYGATE_ETCD_PORT, RAYGATE_SCHED_PORT, RAYGATE_GANG (raygate, kueue,
coscheduling, none). Benchmark code, not part of raygate.
"""

import argparse
import http.client
import json
import os
import random
import re
import ssl
import subprocess
import sys
import threading
import time

# Read at start; the defaults only let tests/unit/test_peers_bench.py import the pure helpers.
STATE = os.environ.get("RAYGATE_STATE", "")
GANG = os.environ.get("RAYGATE_GANG", "none")
APISERVER_PORT = int(os.environ.get("RAYGATE_APISERVER_PORT", "0"))
ETCD_PORT = int(os.environ.get("RAYGATE_ETCD_PORT", "0"))
SCHED_PORT = int(os.environ.get("RAYGATE_SCHED_PORT", "0"))
KUBECTL = os.environ.get("KUBECTL", "kubectl")

# The processes that are the gang system, by hack/cluster.sh component name.
GANG_COMPONENTS = {
    "raygate": ["raygate-webhook", "raygate-gate"],
    "kueue": ["kueue"],
    "coscheduling": ["podgroup-controller"],
    "none": [],
}
OTHER_COMPONENTS = ["kube-scheduler", "kuberay-operator", "kube-apiserver", "etcd", "kube-controller-manager"]

GI = 1024**3


def log(msg):
    print(f"peers[{GANG}]: {msg}", file=sys.stderr, flush=True)


class Kube:
    """A small client of the apiserver: the admin token, the local CA."""

    def __init__(self):
        self.ctx = ssl.create_default_context(cafile=os.path.join(STATE, "pki", "ca.crt"))
        with open(os.path.join(STATE, "pki", "admin.token")) as f:
            self.token = f.read().strip()
        self.conn = None

    def connect(self, timeout=60):
        return http.client.HTTPSConnection("127.0.0.1", APISERVER_PORT, context=self.ctx, timeout=timeout)

    def request(self, method, path, body=None, ctype="application/json", raw=False):
        headers = {"Authorization": "Bearer " + self.token, "Accept": "application/json", "User-Agent": "raygate-peers-bench/1"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = ctype
        for attempt in range(5):
            try:
                if self.conn is None:
                    self.conn = self.connect()
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                text = resp.read()
                if raw:
                    return resp.status, text.decode()
                return resp.status, (json.loads(text) if text else {})
            except (OSError, http.client.HTTPException):
                self.conn = None
                time.sleep(0.5 * (attempt + 1))
        raise RuntimeError(f"{method} {path}: the apiserver did not answer")

    def create(self, path, obj, ok=(200, 201)):
        status, out = self.request("POST", path, obj)
        if status not in ok:
            raise RuntimeError(f"POST {path}: {status} {out.get('message', out)}")
        return out

    def try_create(self, path, obj):
        """(status, message): an answer, whether it admitted the object or not."""
        status, out = self.request("POST", path, obj)
        return status, out.get("message", "")

    def get(self, path):
        status, out = self.request("GET", path)
        return out if status == 200 else None

    def delete(self, path):
        self.request("DELETE", path)

    def patch(self, path, obj):
        status, out = self.request("PATCH", path, obj, ctype="application/merge-patch+json")
        if status != 200:
            raise RuntimeError(f"PATCH {path}: {status} {out.get('message', out)}")


# ------------------------------------------------------------------ objects


def optin(queue):
    """The one label that puts a RayCluster under the gang system."""
    return {
        "raygate": {"volcano.sh/queue-name": queue},
        "kueue": {"kueue.x-k8s.io/queue-name": queue},
        "coscheduling": {"ray.io/gang-scheduling-enabled": "true"},
        "none": {},
    }[GANG]


def raycluster(name, queue, head, groups, autoscaling=False):
    """head: (cpu, memory); groups: [(name, replicas, min, max, cpu, memory)]; cpu and memory as strings."""

    def container(n, res):
        return {"name": n, "image": "rayproject/ray:2.9.0", "resources": {"requests": {"cpu": res[0], "memory": res[1]}}}

    spec = {
        "rayVersion": "2.9.0",
        "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [container("ray-head", head)]}}},
        "workerGroupSpecs": [
            {
                "groupName": g[0],
                "replicas": g[1],
                "minReplicas": g[2],
                "maxReplicas": g[3],
                "rayStartParams": {},
                "template": {"spec": {"containers": [container("ray-worker", (g[4], g[5]))]}},
            }
            for g in groups
        ],
    }
    if autoscaling:
        spec["enableInTreeAutoscaling"] = True
        spec["autoscalerOptions"] = {"resources": {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"cpu": "500m", "memory": "512Mi"}}}
        spec["headGroupSpec"]["rayStartParams"] = {"num-cpus": "0"}
    return {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": name, "labels": optin(queue)}, "spec": spec}


def rc_path(ns, name=""):
    return f"/apis/ray.io/v1/namespaces/{ns}/rayclusters" + (f"/{name}" if name else "")


def make_namespace(kube, ns):
    kube.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    # Pods need the namespace's default service account (kube-controller-manager makes it).
    deadline = time.time() + 60
    while kube.get(f"/api/v1/namespaces/{ns}/serviceaccounts/default") is None:
        if time.time() > deadline:
            raise RuntimeError(f"namespace {ns} has no default service account")
        time.sleep(0.2)


def delete_namespace(kube, ns, limit=900):
    kube.request("DELETE", f"/apis/ray.io/v1/namespaces/{ns}/rayclusters")
    kube.delete(f"/api/v1/namespaces/{ns}")
    deadline = time.time() + limit
    while kube.get(f"/api/v1/namespaces/{ns}") is not None:
        if time.time() > deadline:
            raise RuntimeError(f"namespace {ns} was not deleted in {limit} s")
        time.sleep(1)


def make_queue(kube, ns, name, cpu, memory, local=True):
    """The system's queue with capability (cpu, memory), for RayClusters in ns
    (Kueue: a ClusterQueue, and its LocalQueue in ns unless local is False)."""
    if GANG == "raygate":
        kube.create(
            "/apis/scheduling.volcano.sh/v1beta1/queues",
            {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": name},
             "spec": {"weight": 1, "capability": {"cpu": cpu, "memory": memory}}},
        )
    elif GANG == "kueue":
        if kube.get("/apis/kueue.x-k8s.io/v1beta1/resourceflavors/default") is None:
            kube.create("/apis/kueue.x-k8s.io/v1beta1/resourceflavors",
                        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": "default"}})
        kube.create(
            "/apis/kueue.x-k8s.io/v1beta1/clusterqueues",
            {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": name},
             "spec": {"namespaceSelector": {}, "resourceGroups": [{"coveredResources": ["cpu", "memory"], "flavors": [
                 {"name": "default", "resources": [{"name": "cpu", "nominalQuota": cpu}, {"name": "memory", "nominalQuota": memory}]}]}]}},
        )
        if local:
            make_local_queue(kube, ns, name)


def make_local_queue(kube, ns, name):
    kube.create(f"/apis/kueue.x-k8s.io/v1beta1/namespaces/{ns}/localqueues",
                {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue", "metadata": {"name": name},
                 "spec": {"clusterQueue": name}})


def delete_queue(kube, name):
    if GANG == "raygate":
        kube.delete(f"/apis/scheduling.volcano.sh/v1beta1/queues/{name}")
    elif GANG == "kueue":
        kube.delete(f"/apis/kueue.x-k8s.io/v1beta1/clusterqueues/{name}")


# ------------------------------------------------------------------ room on the nodes

# KubeRay injects a wait-gcs-ready init container into every worker pod with
# requests of cpu 200m, memory 256Mi (ray-operator controllers/ray/common/pod.go),
# so a worker of 10m containers asks the scheduler for 200m.
WORKER_INIT_CPU_M = 200


def cpu_m(q):
    """A CPU quantity ("8", "500m") in millicores."""
    return int(q[:-1]) if q.endswith("m") else int(float(q) * 1000)


def ensure_room(kube, need_cpu_m, margin=1.05):
    """Adds kwok nodes shaped like the first one until the nodes' allocatable
    CPU holds need_cpu_m with the margin (the scheduler spreads pods, so the
    last node is never filled exactly); nothing when they already hold it.
    Returns the added nodes' names (remove_nodes deletes them)."""
    nodes = kube.get("/api/v1/nodes")["items"]
    have = sum(cpu_m(n["status"]["allocatable"]["cpu"]) for n in nodes)
    if have >= need_cpu_m * margin:
        return []
    model = next(n for n in nodes if n["metadata"].get("annotations", {}).get("kwok.x-k8s.io/node") == "fake")
    per = cpu_m(model["status"]["allocatable"]["cpu"])
    count = -(-(int(need_cpu_m * margin) - have) // per)
    names = [f"kwok-room-{i}" for i in range(count)]
    for name in names:
        meta = model["metadata"]
        labels = dict(meta.get("labels", {}), **{"kubernetes.io/hostname": name})
        annotations = {k: v for k, v in meta.get("annotations", {}).items() if k in ("kwok.x-k8s.io/node", "node.alpha.kubernetes.io/ttl")}
        kube.create("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels, "annotations": annotations},
                                      "status": {"allocatable": model["status"]["allocatable"], "capacity": model["status"]["capacity"]}})

    def ready():
        got = 0
        for name in names:
            n = kube.get(f"/api/v1/nodes/{name}") or {}
            ok = any(c["type"] == "Ready" and c["status"] == "True" for c in n.get("status", {}).get("conditions", []))
            # kube-controller-manager lifts the not-ready taint it put on the new node.
            got += ok and not n.get("spec", {}).get("taints")
        return got == len(names)

    if not wait_for(ready, 120, step=0.5):
        raise RuntimeError(f"{len(names)} added kwok nodes did not become Ready")
    log(f"added {len(names)} nodes for {need_cpu_m}m of CPU ({have}m allocatable before)")
    return names


def remove_nodes(kube, names):
    for name in names:
        kube.delete(f"/api/v1/nodes/{name}")


# ------------------------------------------------------------------ pods, watched


class PodWatch:
    """Watches a namespace's pods; keeps per pod its Ray cluster, node, and the
    time it was first seen bound."""

    def __init__(self, kube, ns):
        self.kube, self.ns = kube, ns
        self.lock = threading.Lock()
        self.pods = {}  # name -> {cluster, node, bound_at, gated, created_at}
        self.stop = False
        self.error = None
        lst = kube.get(f"/api/v1/namespaces/{ns}/pods")
        for p in lst["items"]:
            self._update(p)
        self.thread = threading.Thread(target=self._run, args=(lst["metadata"]["resourceVersion"],), daemon=True)
        self.thread.start()

    def _update(self, p, deleted=False):
        name = p["metadata"]["name"]
        now = time.time()
        with self.lock:
            if deleted:
                self.pods.pop(name, None)
                return
            rec = self.pods.setdefault(name, {"created_at": now, "bound_at": None})
            rec["cluster"] = p["metadata"].get("labels", {}).get("ray.io/cluster", "")
            rec["node"] = p["spec"].get("nodeName")
            rec["gated"] = bool(p["spec"].get("schedulingGates"))
            if rec["node"] and rec["bound_at"] is None:
                rec["bound_at"] = now

    def _run(self, rv):
        while not self.stop:
            conn = self.kube.connect(timeout=3700)
            try:
                conn.request("GET", f"/api/v1/namespaces/{self.ns}/pods?watch=1&resourceVersion={rv}&timeoutSeconds=3600",
                             headers={"Authorization": "Bearer " + self.kube.token, "Accept": "application/json"})
                resp = conn.getresponse()
                if resp.status != 200:
                    raise RuntimeError(f"watch: {resp.status}")
                while not self.stop:
                    line = resp.readline()
                    if not line:
                        break
                    ev = json.loads(line)
                    if ev["type"] == "ERROR":
                        raise RuntimeError(f"watch: {ev['object'].get('message')}")
                    rv = ev["object"]["metadata"]["resourceVersion"]
                    self._update(ev["object"], deleted=ev["type"] == "DELETED")
            except Exception as e:  # noqa: BLE001 - reported by the caller
                if not self.stop:
                    self.error = str(e)
                    log(f"pod watch of {self.ns}: {e}")
                return
            finally:
                conn.close()

    def snapshot(self):
        with self.lock:
            return {k: dict(v) for k, v in self.pods.items()}

    def close(self):
        self.stop = True


def by_cluster(snap):
    out = {}
    for p in snap.values():
        c = out.setdefault(p["cluster"], {"pods": 0, "bound": 0, "gated": 0})
        c["pods"] += 1
        c["bound"] += 1 if p["node"] else 0
        c["gated"] += 1 if p["gated"] else 0
    return out


def wait_for(pred, limit, step=0.2):
    deadline = time.time() + limit
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()


# ------------------------------------------------------------------ cost


def proc_cpu_rss(component):
    """(cpu seconds, VmRSS kB, VmHWM kB) of a hack/cluster.sh component, or None."""
    try:
        with open(os.path.join(STATE, "pids", component + ".pid")) as f:
            pid = f.read().strip()
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        rss = hwm = 0
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
        return {"cpu_s": cpu, "rss_kb": rss, "hwm_kb": hwm}
    except (OSError, IndexError, ValueError):
        return None


def prom_sum(text, metric, label=None):
    """Sums a Prometheus counter, by one label's value if label is given."""
    out = {} if label else 0.0
    pat = re.compile(r"^" + re.escape(metric) + r"(\{[^}]*\})? ([0-9.e+-]+)$")
    for line in text.splitlines():
        m = pat.match(line)
        if not m:
            continue
        v = float(m.group(2))
        if label:
            lm = re.search(label + r'="([^"]*)"', m.group(1) or "")
            key = lm.group(1) if lm else ""
            out[key] = out.get(key, 0.0) + v
        else:
            out += v
    return out


def scrape(kube, since=None):
    """Counters read before and after a workload; given the point before
    (since), also the audit log's mutating requests from there to now."""
    _, api = kube.request("GET", "/metrics", raw=True)
    # Right after the apiserver's counters, so that both count the same requests.
    audit, offset = audit_read(os.path.join(STATE, "logs", "audit.log"), since["audit_offset"] if since else None)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", ETCD_PORT, timeout=10)
        conn.request("GET", "/metrics")
        etcd = conn.getresponse().read().decode()
    except OSError:
        etcd = ""
    try:
        sc = http.client.HTTPSConnection("127.0.0.1", SCHED_PORT, context=ssl._create_unverified_context(), timeout=10)
        sc.request("GET", "/metrics", headers={"Authorization": "Bearer " + kube.token})
        sched = sc.getresponse().read().decode()
    except OSError:
        sched = ""
    puts = prom_sum(etcd, "etcd_mvcc_put_total") or prom_sum(etcd, "etcd_debugging_mvcc_put_total")
    dels = prom_sum(etcd, "etcd_mvcc_delete_total") or prom_sum(etcd, "etcd_debugging_mvcc_delete_total")
    txns = prom_sum(etcd, "etcd_mvcc_txn_total") or prom_sum(etcd, "etcd_debugging_mvcc_txn_total")
    procs = {c: proc_cpu_rss(c) for c in GANG_COMPONENTS[GANG] + OTHER_COMPONENTS}
    return {
        "audit_offset": offset,
        "audit": audit,
        "apiserver_requests": prom_sum(api, "apiserver_request_total", "verb"),
        "etcd": {"put": puts, "delete": dels, "txn": txns},
        "scheduler_attempts": prom_sum(sched, "scheduler_schedule_attempts_total", "result"),
        "procs": procs,
        "t": time.time(),
    }


# ------------------------------------------------------------------ audit log

# Who sent a mutating request, by the first word of its user agent (every
# component signs in as the same admin user here; each sends its own agent,
# its program's name). Another word stands for itself.
# The raygate webhook only watches Queues, so raygate's writes are its gate's.
AUDIT_COMPONENTS = {
    "raygate": "raygate",
    "kuberay-operator": "kuberay",
    "ray-operator": "kuberay",
    "kube-scheduler": "kube-scheduler",
    "scheduler": "kube-scheduler",  # scheduler-plugins' scheduler, in its place under coscheduling
    "kube-controller-manager": "kube-controller-manager",
    "kwok": "kwok",
    "kueue": "kueue",
    "controller": "podgroup-controller",
    "raygate-peers-bench": "bench",
    "kube-apiserver": "kube-apiserver",
    "kubectl": "kubectl",
}
MUTATING_VERBS = ("create", "update", "patch", "delete", "deletecollection")


def audit_component(event):
    """The component that sent an audit event, from its user agent."""
    agent = event.get("userAgent") or ""
    word = agent.split("/", 1)[0].split(" ", 1)[0]
    if word in AUDIT_COMPONENTS:
        return AUDIT_COMPONENTS[word]
    return word or event.get("user", {}).get("username", "unknown")


def audit_count(lines):
    """Mutating requests in audit log lines (JSON events), as
    {component: {"verb resource[/subresource]": n}}; other lines are skipped."""
    out = {}
    for line in lines:
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if not isinstance(ev, dict) or ev.get("verb") not in MUTATING_VERBS or ev.get("stage", "ResponseComplete") != "ResponseComplete":
            continue
        ref = ev.get("objectRef") or {}
        what = ev["verb"] + " " + (ref.get("resource") or "?") + ("/" + ref["subresource"] if ref.get("subresource") else "")
        byreq = out.setdefault(audit_component(ev), {})
        byreq[what] = byreq.get(what, 0) + 1
    return out


def audit_read(path, offset=None):
    """(counts of the events written after byte offset, the offset read to,
    the end of the last whole line). Without an offset: (None, the end).
    None counts when there is no log or it was rotated meanwhile."""
    try:
        with open(path, "rb") as f:
            end = f.seek(0, os.SEEK_END)
            start = offset if offset is not None else max(end - 65536, 0)
            if end < start:
                return None, end
            f.seek(start)
            data = f.read(end - start)
    except OSError:
        return None, None
    whole = data[: data.rfind(b"\n") + 1]
    if offset is None:
        return None, start + len(whole)
    return audit_count(whole.decode(errors="replace").splitlines()), offset + len(whole)


def audit_cost(counts, pods):
    """Mutating requests per Ray pod from audit_count's counts: in total, by
    component, and by component and request (rounded; None without a log)."""
    if counts is None:
        return None
    per = max(pods, 1)
    total = sum(n for c in counts.values() for n in c.values())
    return {
        "mutations": total,
        "mutations_per_pod": round(total / per, 2),
        "by_component": {c: round(sum(r.values()) / per, 2) for c, r in sorted(counts.items())},
        "by_request": {c: {k: round(n / per, 3) for k, n in sorted(r.items())} for c, r in sorted(counts.items())},
    }


def cost(before, after, pods):
    """What a workload cost, in total and per Ray pod."""
    verbs = sorted(set(before["apiserver_requests"]) | set(after["apiserver_requests"]))
    req = {v: after["apiserver_requests"].get(v, 0) - before["apiserver_requests"].get(v, 0) for v in verbs}
    etcd_writes = sum(after["etcd"][k] - before["etcd"][k] for k in ("put", "delete"))
    procs = {}
    for c, a in after["procs"].items():
        b = before["procs"].get(c)
        if a and b:
            procs[c] = {"cpu_s": round(a["cpu_s"] - b["cpu_s"], 2), "rss_kb": a["rss_kb"], "hwm_kb": a["hwm_kb"]}
    gang = [procs[c] for c in GANG_COMPONENTS[GANG] if c in procs]
    attempts = {k: after["scheduler_attempts"].get(k, 0) - before["scheduler_attempts"].get(k, 0) for k in after["scheduler_attempts"]}
    per = max(pods, 1)
    api = procs.get("kube-apiserver")
    return {
        "pods": pods,
        "apiserver_cpu_s": api["cpu_s"] if api else None,
        "apiserver_cpu_s_per_pod": round(api["cpu_s"] / per, 4) if api else None,
        "audit": audit_cost(after.get("audit"), pods),
        "apiserver_requests": req,
        "apiserver_requests_per_pod": {v: round(n / per, 2) for v, n in req.items() if n},
        "apiserver_mutations_per_pod": round(sum(n for v, n in req.items() if v in ("POST", "PUT", "PATCH", "DELETE", "CREATE", "UPDATE", "APPLY")) / per, 2),
        "etcd_writes": etcd_writes,
        "etcd_writes_per_pod": round(etcd_writes / per, 2),
        "gang_cpu_s": round(sum(g["cpu_s"] for g in gang), 2),
        "gang_rss_kb": sum(g["rss_kb"] for g in gang),
        "gang_hwm_kb": sum(g["hwm_kb"] for g in gang),
        "procs": procs,
        "scheduler_attempts": attempts,
        "scheduler_attempts_per_pod": round(sum(attempts.values()) / per, 2),
        "seconds": round(after["t"] - before["t"], 2),
    }


# ------------------------------------------------------------------ 1. walkthrough


def describe(kind, ns, name):
    """The Events of kubectl describe: (all rows, the one that says why it waits:
    the last Warning, else the last row)."""
    out = subprocess.run([KUBECTL, "describe", kind, "-n", ns, name], capture_output=True, text=True).stdout
    ev = out.split("Events:", 1)[1] if "Events:" in out else ""
    rows = [re.sub(r"\s{2,}", "  ", l.strip()) for l in ev.strip().splitlines()
            if l.strip() and not l.strip().startswith(("Type", "----", "<none>"))]
    warn = [r for r in rows if r.startswith("Warning")]
    return rows, (warn[-1] if warn else rows[-1] if rows else "(no events)")


def walkthrough(args):
    kube = Kube()
    ns, q = f"peers-walk-{int(time.time())}", f"walk-{int(time.time()) % 100000}"
    make_namespace(kube, ns)
    make_queue(kube, ns, q, "4", "6Gi")
    w = PodWatch(kube, ns)
    shape = dict(head=("1", "2Gi"), groups=[("worker", 2, 2, 2, "1", "1Gi")])
    out = {"queue": {"cpu": "4", "memory": "6Gi"}}
    t0 = time.time()
    kube.create(rc_path(ns), raycluster("test-cluster-0", q, **shape))
    ok = wait_for(lambda: by_cluster(w.snapshot()).get("test-cluster-0", {}).get("bound", 0) == 3, 90)
    out["cluster0_all_bound_s"] = round(time.time() - t0, 2) if ok else None
    t1 = time.time()
    kube.create(rc_path(ns), raycluster("test-cluster-1", q, **shape))
    # Held or not: watch it for 20 s (KubeRay creates its pods within a few).
    worst_partial = 0
    deadline = time.time() + 20
    while time.time() < deadline:
        c = by_cluster(w.snapshot()).get("test-cluster-1", {"pods": 0, "bound": 0})
        if 0 < c["bound"] < 3:
            worst_partial = max(worst_partial, c["bound"])
        time.sleep(0.5)
    c1 = by_cluster(w.snapshot()).get("test-cluster-1", {"pods": 0, "bound": 0, "gated": 0})
    out["cluster1_while_cluster0_runs"] = {"pods": c1["pods"], "bound": c1["bound"], "gated": c1["gated"], "max_partly_bound": worst_partial,
                                           "held_whole": c1["bound"] == 0 and worst_partial == 0}
    rc1 = kube.get(rc_path(ns, "test-cluster-1"))
    out["cluster1_suspended"] = bool(rc1 and rc1["spec"].get("suspend"))
    head = next((n for n, p in w.snapshot().items() if p["cluster"] == "test-cluster-1" and "-head-" in n), None)
    kind, name = ("pod", head) if head else ("raycluster", "test-cluster-1")
    if GANG == "kueue":
        # Kueue holds the RayCluster suspended (no pods): its Workload says why.
        wl = kube.get(f"/apis/kueue.x-k8s.io/v1beta1/namespaces/{ns}/workloads")
        items = [i for i in (wl or {}).get("items", []) if "test-cluster-1" in i["metadata"]["name"]]
        if items and not head:
            kind, name = "workload", items[0]["metadata"]["name"]
    rows, why = describe(kind, ns, name)
    out["describe"] = {"kind": kind, "name": name, "why": why, "events": rows}
    t2 = time.time()
    kube.delete(rc_path(ns, "test-cluster-0"))
    ok = wait_for(lambda: by_cluster(w.snapshot()).get("test-cluster-1", {}).get("bound", 0) == 3, 90)
    out["cluster1_all_bound_after_delete_s"] = round(time.time() - t2, 2) if ok else None
    out["cluster1_created_to_all_bound_s"] = round(time.time() - t1, 2) if ok else None
    w.close()
    delete_namespace(kube, ns)
    delete_queue(kube, q)
    return out


# ------------------------------------------------------------------ 2. contention


def contention_shapes(n, seed):
    """n RayClusters of random shapes: a head (1 CPU, 2Gi) and 1-6 workers of 1, 2 or 4 CPUs (2Gi each)."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        workers, cpu = rnd.randint(1, 6), rnd.choice([1, 2, 4])
        out.append({"name": f"c-{i}", "workers": workers, "worker_cpu": cpu, "pods": workers + 1, "cpu": 1 + workers * cpu})
    return out


def contention(args):
    kube = Kube()
    shapes = contention_shapes(args.clusters, args.seed)
    total_cpu = sum(s["cpu"] for s in shapes)
    nodes = kube.get("/api/v1/nodes")["items"]
    node_cpu = sum(int(n["status"]["allocatable"]["cpu"]) for n in nodes)
    node_mem = sum(int(n["status"]["allocatable"]["memory"].rstrip("Gi")) for n in nodes)
    ns, q = f"peers-cont-{int(time.time())}", f"cont-{int(time.time()) % 100000}"
    make_namespace(kube, ns)
    # The queue holds what the nodes hold.
    make_queue(kube, ns, q, str(node_cpu), f"{node_mem}Gi")
    w = PodWatch(kube, ns)
    want = {s["name"]: s for s in shapes}
    before = scrape(kube)
    t0 = time.time()
    for s in shapes:
        kube.create(rc_path(ns), raycluster(s["name"], q, ("1", "2Gi"), [("w", s["workers"], s["workers"], s["workers"], str(s["worker_cpu"]), f"{2 * s['worker_cpu']}Gi")]))
    created_s = time.time() - t0
    samples, last_change, last_key = [], 0.0, None
    partial_cluster_s = 0.0
    max_partial = 0
    while True:
        time.sleep(1)
        t = time.time() - t0
        cl = by_cluster(w.snapshot())
        full = [c for c, v in cl.items() if c in want and v["bound"] == want[c]["pods"]]
        partial = [c for c, v in cl.items() if c in want and 0 < v["bound"] < want[c]["pods"]]
        pending = sum(v["pods"] - v["bound"] for v in cl.values())
        bound = sum(v["bound"] for v in cl.values())
        samples.append({"t": round(t, 1), "full": len(full), "partial": len(partial), "pending": pending, "bound": bound})
        partial_cluster_s += len(partial)
        max_partial = max(max_partial, len(partial))
        key = (tuple(sorted(full)), bound)
        if key != last_key:
            last_key, last_change = key, t
        if t - last_change >= args.quiet:
            settled = True
            break
        if t >= args.limit:
            settled = False
            break
    end = samples[-1]
    cl = by_cluster(w.snapshot())
    full_cpu = sum(want[c]["cpu"] for c, v in cl.items() if c in want and v["bound"] == want[c]["pods"])
    bound_cpu_partial = 0
    for name, p in w.snapshot().items():
        c = p["cluster"]
        if c in want and p["node"] and 0 < cl[c]["bound"] < want[c]["pods"]:
            bound_cpu_partial += 1 if "-head-" in name else want[c]["worker_cpu"]
    after = scrape(kube, before)
    pods = sum(s["pods"] for s in shapes)
    w.close()
    out = {
        "clusters": args.clusters, "seed": args.seed, "pods": pods, "ask_cpu": total_cpu, "node_cpu": node_cpu,
        "ask_over_nodes": round(total_cpu / node_cpu, 2), "create_s": round(created_s, 2),
        "settled_s": round(last_change, 1), "settled": settled, "quiet": args.quiet, "limit": args.limit,
        "full_end": end["full"], "partial_end": end["partial"], "partial_max": max_partial,
        "partial_cluster_s": round(partial_cluster_s, 1), "pending_end": end["pending"], "bound_end": end["bound"],
        "cpu_in_full_clusters": full_cpu, "cpu_in_partial_clusters": bound_cpu_partial,
        "useful_cpu_share": round(full_cpu / node_cpu, 3),
        "cost": cost(before, after, pods),
        "samples": samples,
    }
    delete_namespace(kube, ns)
    delete_queue(kube, q)
    return out


# ------------------------------------------------------------------ 3. flood


def flood(args):
    kube = Kube()
    ns, q = f"peers-flood-{int(time.time())}", f"flood-{int(time.time()) % 100000}"
    make_namespace(kube, ns)
    make_queue(kube, ns, q, "100000", "100000Gi")
    # Room on the nodes for every pod: a head of 10m, workers of 200m each (KubeRay's init container).
    added = ensure_room(kube, args.clusters * (10 + (args.pods - 1) * WORKER_INIT_CPU_M))
    w = PodWatch(kube, ns)
    want = args.clusters * args.pods
    before = scrape(kube)
    t0 = time.time()
    for i in range(args.clusters):
        kube.create(rc_path(ns), raycluster(f"f-{i}", q, ("10m", "16Mi"), [("w", args.pods - 1, args.pods - 1, args.pods - 1, "10m", "16Mi")]))
    created = time.time() - t0
    max_partial = 0

    def done():
        nonlocal max_partial
        cl = by_cluster(w.snapshot())
        max_partial = max(max_partial, sum(1 for v in cl.values() if 0 < v["bound"] < args.pods))
        return sum(v["bound"] for v in cl.values()) >= want

    ok = wait_for(done, args.limit, step=0.5)
    snap = w.snapshot()
    last = max((p["bound_at"] for p in snap.values() if p["bound_at"]), default=t0)
    after = scrape(kube, before)
    w.close()
    out = {"clusters": args.clusters, "pods_per_cluster": args.pods, "create_s": round(created, 2),
           "all_bound_s": round(last - t0, 2) if ok else None, "bound": sum(1 for p in snap.values() if p["node"]),
           "partial_max": max_partial, "nodes_added": len(added), "cost": cost(before, after, want)}
    delete_namespace(kube, ns)
    delete_queue(kube, q)
    remove_nodes(kube, added)
    return out


# ------------------------------------------------------------------ 4. one big gang


def gang(args):
    """One gang of --pods pods. Admissible: Kueue, when its LocalQueue appears
    (KubeRay creates the pods after Kueue unsuspends the RayCluster); raygate,
    coscheduling and none, when the last pod exists. raygate's Queue exists
    from the start, as the users' do: the gang is admitted once its head and a
    worker exist (lib/sched/admit/early.h) and its pods are ungated as they come, so
    created -> all bound overlaps creation and binding (a Queue that appeared
    once all 1,000 pods existed, gated, would measure ungating a whole gang at
    once, not the path a user's gang takes)."""
    kube = Kube()
    ns, q = f"peers-gang-{int(time.time())}", f"gang-{int(time.time()) % 100000}"
    make_namespace(kube, ns)
    n = args.pods
    added = ensure_room(kube, 10 + (n - 1) * WORKER_INIT_CPU_M)
    w = PodWatch(kube, ns)
    before = scrape(kube)
    t0 = time.time()
    if GANG == "kueue":
        # The ClusterQueue exists; its LocalQueue in this namespace does not yet.
        make_queue(kube, ns, q, "100000", "100000Gi", local=False)
        t0 = time.time()
    elif GANG == "raygate":
        make_queue(kube, ns, q, "100000", "100000Gi")
        t0 = time.time()
    kube.create(rc_path(ns), raycluster("big", q, ("10m", "16Mi"), [("w", n - 1, n - 1, n - 1, "10m", "16Mi")]))
    if GANG == "kueue":
        time.sleep(2)
        ta = time.time()
        make_local_queue(kube, ns, q)
    else:
        wait_for(lambda: len(w.snapshot()) >= n, args.limit, step=0.1)
        snap = w.snapshot()
        ta = max(p["created_at"] for p in snap.values())
    ok = wait_for(lambda: sum(1 for p in w.snapshot().values() if p["node"]) >= n, args.limit, step=0.2)
    snap = w.snapshot()
    last = max((p["bound_at"] for p in snap.values() if p["bound_at"]), default=ta)
    after = scrape(kube, before)
    w.close()
    made = sorted(p["created_at"] for p in snap.values() if p.get("created_at"))
    out = {"pods": n, "created_to_all_bound_s": round(last - t0, 2) if ok else None,
           "admissible_to_all_bound_s": round(last - ta, 2) if ok else None,
           # KubeRay's part: from the RayCluster's creation to its first pod, and to its last.
           "first_pod_s": round(made[0] - t0, 2) if made else None, "last_pod_s": round(made[-1] - t0, 2) if made else None,
           "bound": sum(1 for p in snap.values() if p["node"]), "nodes_added": len(added), "cost": cost(before, after, n)}
    delete_namespace(kube, ns)
    delete_queue(kube, q)
    remove_nodes(kube, added)
    return out


# ------------------------------------------------------------------ 5. autoscaling


def autoscaling(args):
    """The autoscaling sample (head with the autoscaler sidecar, workers min 1,
    replicas 3, max 5) in a queue of cpu 2: what the system takes as the gang,
    what it places, and what the 2 extra workers do when the queue grows to
    cpu 4 (and, for the systems without a queue, nothing changes)."""
    kube = Kube()
    ns, q = f"peers-auto-{int(time.time())}", f"auto-{int(time.time()) % 100000}"
    make_namespace(kube, ns)
    make_queue(kube, ns, q, "2", "16Gi")
    w = PodWatch(kube, ns)
    status, msg = kube.try_create(rc_path(ns), raycluster("auto", q, ("500m", "1Gi"), [("cpu", 3, 1, 5, "1", "1Gi")], autoscaling=True))
    out = {"created": status in (200, 201), "denied": "" if status in (200, 201) else msg}
    if out["created"]:
        wait_for(lambda: len(w.snapshot()) >= 4, 30)
        time.sleep(10)
        c = by_cluster(w.snapshot()).get("auto", {"pods": 0, "bound": 0})
        out["pods"], out["bound_small_queue"] = c["pods"], c["bound"]
        if GANG == "raygate":
            rc = kube.get(rc_path(ns, "auto"))
            out["gang_size"] = int(rc["metadata"].get("annotations", {}).get("raygate.io/min-member", 0))
        elif GANG == "coscheduling":
            pg = kube.get(f"/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{ns}/podgroups/auto")
            out["gang_size"] = pg["spec"]["minMember"] if pg else None
        if GANG == "raygate":
            kube.patch(f"/apis/scheduling.volcano.sh/v1beta1/queues/{q}", {"spec": {"capability": {"cpu": "4"}}})
            wait_for(lambda: by_cluster(w.snapshot()).get("auto", {}).get("bound", 0) >= 4, 30)
            out["bound_queue_grown"] = by_cluster(w.snapshot()).get("auto", {}).get("bound", 0)
    w.close()
    delete_namespace(kube, ns)
    delete_queue(kube, q)
    return out


# ------------------------------------------------------------------ 5b. RayJob


def rayjob_obj(name, queue):
    """KubeRay's RayJob sample (samples/rayjob-sample.yaml): a cluster of a head
    (1 CPU, 2Gi) and 2 workers (1 CPU, 1Gi), then KubeRay's default submitter."""
    def container(n, cpu, mem):
        return {"name": n, "image": "rayproject/ray:2.46.0", "resources": {"requests": {"cpu": cpu, "memory": mem}, "limits": {"cpu": cpu, "memory": mem}}}
    return {"apiVersion": "ray.io/v1", "kind": "RayJob", "metadata": {"name": name, "labels": optin(queue)},
            "spec": {"entrypoint": "python -c 'import ray; ray.init()'", "shutdownAfterJobFinishes": True, "ttlSecondsAfterFinished": 60,
                     "rayClusterSpec": {"rayVersion": "2.46.0",
                                        "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [container("ray-head", "1", "2Gi")]}}},
                                        "workerGroupSpecs": [{"groupName": "small-group", "replicas": 2, "minReplicas": 2, "maxReplicas": 2, "rayStartParams": {},
                                                              "template": {"spec": {"containers": [container("ray-worker", "1", "1Gi")]}}}]}}}


def rayjob(args):
    """Two RayJobs in a queue with room for one (cpu 5, memory 8Gi: a job's
    cluster is cpu 3, 4Gi, its submitter 500m, 200Mi): is the second job's
    cluster held whole while the first runs, and placed once the first is
    deleted?"""
    kube = Kube()
    ns, q = f"peers-job-{int(time.time())}", f"job-{int(time.time()) % 100000}"
    make_namespace(kube, ns)
    make_queue(kube, ns, q, "5", "8Gi")
    w = PodWatch(kube, ns)
    path = f"/apis/ray.io/v1/namespaces/{ns}/rayjobs"

    def cluster_pods(job):
        """(pods, bound) of the job's RayCluster (named <job>-<5 characters>; the submitter pod is not counted)."""
        ps = [p for p in w.snapshot().values() if re.fullmatch(job + r"-[a-z0-9]{5}", p["cluster"] or "")]
        return len(ps), sum(1 for p in ps if p["node"])

    out = {"queue": {"cpu": "5", "memory": "8Gi"}}
    status, msg = kube.try_create(path, rayjob_obj("job-a", q))
    if status not in (200, 201):
        out["denied"] = msg
        w.close()
        delete_namespace(kube, ns)
        delete_queue(kube, q)
        return out
    t0 = time.time()
    ok = wait_for(lambda: cluster_pods("job-a")[1] == 3, 120)
    out["job_a_cluster_bound_s"] = round(time.time() - t0, 2) if ok else None
    kube.create(path, rayjob_obj("job-b", q))
    worst = 0
    deadline = time.time() + 20
    while time.time() < deadline:
        n, b = cluster_pods("job-b")
        if 0 < b < 3:
            worst = max(worst, b)
        time.sleep(0.5)
    n, b = cluster_pods("job-b")
    jb = kube.get(f"{path}/job-b")
    out["job_b_while_job_a_runs"] = {"pods": n, "bound": b, "max_partly_bound": worst, "held_whole": b == 0 and worst == 0,
                                     "suspended": bool(jb and jb["spec"].get("suspend"))}
    t1 = time.time()
    kube.delete(f"{path}/job-a")
    ok = wait_for(lambda: cluster_pods("job-b")[1] == 3, 120)
    out["job_b_cluster_bound_after_delete_s"] = round(time.time() - t1, 2) if ok else None
    w.close()
    delete_namespace(kube, ns)
    delete_queue(kube, q)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("walkthrough")
    c = sub.add_parser("contention")
    c.add_argument("--clusters", type=int, default=50)
    c.add_argument("--seed", type=int, default=16)
    c.add_argument("--limit", type=float, default=240)
    c.add_argument("--quiet", type=float, default=30, help="settled after this long without a change")
    s = sub.add_parser("shapes")
    s.add_argument("--clusters", type=int, default=50)
    s.add_argument("--seed", type=int, default=16)
    f = sub.add_parser("flood")
    f.add_argument("--clusters", type=int, default=200)
    f.add_argument("--pods", type=int, default=10)
    f.add_argument("--limit", type=float, default=900)
    g = sub.add_parser("gang")
    g.add_argument("--pods", type=int, default=1000)
    g.add_argument("--limit", type=float, default=600)
    sub.add_parser("autoscaling")
    sub.add_parser("rayjob")
    args = ap.parse_args()
    if args.cmd == "shapes":
        sh = contention_shapes(args.clusters, args.seed)
        print(json.dumps({"cpu": sum(s["cpu"] for s in sh), "pods": sum(s["pods"] for s in sh)}))
        return
    fn = {"walkthrough": walkthrough, "contention": contention, "flood": flood, "gang": gang, "autoscaling": autoscaling, "rayjob": rayjob}[args.cmd]
    print(json.dumps(fn(args)))


if __name__ == "__main__":
    main()
