#!/usr/bin/env python3
"""At most once, sampled: polls the worker clusters of a dispatch
test every --interval seconds (0.5) and reports a gang that has pods bound in
two clusters at the same moment.

A gang is a dispatched copy's manager object, by the uid the dispatcher wrote
on the copy (annotation raygate.io/dispatch-origin-uid, on the RayCluster or
RayJob; a RayCluster KubeRay made for a RayJob belongs to that RayJob by its
labels ray.io/originated-from-crd/-cr-name when it lacks the annotation). Its
pods: those labelled ray.io/cluster=<that RayCluster> and a RayJob's submitter
(batch.kubernetes.io/job-name=<the RayJob>), in the same namespace. Bound: the
pod has a node and has not finished (phase Succeeded or Failed); a pod being
deleted but still bound counts: it may still run.

The workers of one poll are read one after the other (pods, then RayClusters
and RayJobs, of each); a poll in which a worker did not answer is not judged
(counted in "errors"). Standard library only.

  dispatch_sampler.py --worker NAME=SERVER,TOKEN-FILE,CA-FILE ... [--namespace NS]
                      --violations FILE --status FILE [--interval 0.5]
  dispatch_sampler.py --self-test

--violations gets a JSON line per violation; --status after every poll
{"polls", "errors", "violations", "bound": {uid: [workers bound now]},
 "ever": {uid: [workers it was ever bound in]}, "t"}.
"""
import argparse
import http.client
import json
import os
import signal
import ssl
import sys
import time

ORIGIN = "raygate.io/dispatch-origin-uid"


class Worker:
    def __init__(self, spec):
        name, rest = spec.split("=", 1)
        server, token_file, ca = rest.split(",")
        self.name = name
        host_port = server.split("://", 1)[-1]
        self.host, port = host_port.rsplit(":", 1)
        self.port = int(port)
        self.token = open(token_file).read().strip()
        self.ctx = ssl.create_default_context(cafile=ca)

    def get(self, path):
        """The decoded JSON of GET path; raises on any failure."""
        conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=3)
        try:
            conn.request("GET", path, headers={"Authorization": "Bearer " + self.token})
            resp = conn.getresponse()
            body = resp.read()
            if resp.status == 404:
                return {"items": []}  # a kind not served (RayJob CRD missing): none of it
            if resp.status != 200:
                raise RuntimeError(f"GET {path}: HTTP {resp.status}")
            return json.loads(body)
        finally:
            conn.close()


def listing(worker, namespace):
    """(pods, rayclusters, rayjobs) items of one worker."""
    ns = f"/namespaces/{namespace}" if namespace else ""
    pods = worker.get(f"/api/v1{ns}/pods")["items"]
    rcs = worker.get(f"/apis/ray.io/v1{ns}/rayclusters")["items"]
    jobs = worker.get(f"/apis/ray.io/v1{ns}/rayjobs")["items"]
    return pods, rcs, jobs


def origin_of(obj):
    return ((obj.get("metadata") or {}).get("annotations") or {}).get(ORIGIN)


def bound_gangs(pods, rcs, jobs):
    """The origin uids with at least one bound, unfinished pod in this listing."""
    job_uid = {}
    for j in jobs:
        u = origin_of(j)
        if u:
            job_uid[(j["metadata"].get("namespace"), j["metadata"]["name"])] = u
    rc_uid = {}
    for rc in rcs:
        md = rc["metadata"]
        key = (md.get("namespace"), md["name"])
        u = origin_of(rc)
        labels = md.get("labels") or {}
        if not u and labels.get("ray.io/originated-from-crd") == "RayJob":
            u = job_uid.get((key[0], labels.get("ray.io/originated-from-cr-name")))
        if u:
            rc_uid[key] = u
    out = set()
    for p in pods:
        md, spec, status = p["metadata"], p.get("spec") or {}, p.get("status") or {}
        if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
            continue
        labels = md.get("labels") or {}
        ns = md.get("namespace")
        u = rc_uid.get((ns, labels.get("ray.io/cluster")))
        if u is None:
            u = job_uid.get((ns, labels.get("batch.kubernetes.io/job-name")))
        if u:
            out.add(u)
    return out


def judge(bound_by_worker):
    """{uid: [workers]} of the gangs bound in more than one worker."""
    where = {}
    for w, uids in bound_by_worker.items():
        for u in uids:
            where.setdefault(u, []).append(w)
    return {u: sorted(ws) for u, ws in where.items() if len(ws) > 1}


def run(args):
    workers = [Worker(s) for s in args.worker]
    state = {"polls": 0, "errors": 0, "violations": 0, "bound": {}, "ever": {}, "t": 0}
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    while True:
        t0 = time.time()
        try:
            bound = {w.name: bound_gangs(*listing(w, args.namespace)) for w in workers}
        except Exception as e:  # a worker away: this poll judges nothing
            state["errors"] += 1
            print(f"dispatch_sampler: poll failed: {e}", file=sys.stderr)
            bound = None
        if bound is not None:
            state["polls"] += 1
            now = {}
            for w, uids in bound.items():
                for u in uids:
                    now.setdefault(u, []).append(w)
                    ever = state["ever"].setdefault(u, [])
                    if w not in ever:
                        ever.append(w)
            state["bound"] = now
            for u, ws in judge(bound).items():
                state["violations"] += 1
                line = json.dumps({"kind": "bound-twice", "origin_uid": u, "workers": ws, "t": t0})
                if state["violations"] <= 3:  # each poll's is kept in --violations; the first few said
                    print(f"INVARIANT VIOLATED [bound-twice]: gang {u} has pods bound in {', '.join(ws)} at once",
                          file=sys.stderr)
                with open(args.violations, "a") as f:
                    f.write(line + "\n")
        state["t"] = t0
        with open(args.status + ".tmp", "w") as f:
            json.dump(state, f)
        os.replace(args.status + ".tmp", args.status)
        time.sleep(max(0.0, args.interval - (time.time() - t0)))


def self_test():
    def pod(ns, cluster=None, job=None, node="n1", phase="Running"):
        labels = {}
        if cluster:
            labels["ray.io/cluster"] = cluster
        if job:
            labels["batch.kubernetes.io/job-name"] = job
        return {"metadata": {"namespace": ns, "labels": labels}, "spec": {"nodeName": node} if node else {},
                "status": {"phase": phase}}

    def obj(ns, name, uid=None, labels=None):
        return {"metadata": {"namespace": ns, "name": name, "labels": labels or {},
                             "annotations": {ORIGIN: uid} if uid else {}}}

    fails = 0

    def check(what, want, got):
        nonlocal fails
        ok = want == got
        fails += 0 if ok else 1
        print(("ok: " if ok else "FAIL: ") + what + ("" if ok else f": expected {want!r}, got {got!r}"))

    rcs = [obj("n", "g1", "u1"), obj("n", "job1-abcde", labels={"ray.io/originated-from-crd": "RayJob",
                                                                 "ray.io/originated-from-cr-name": "job1"})]
    jobs = [obj("n", "job1", "u2")]
    check("a bound pod of a copy", {"u1"}, bound_gangs([pod("n", "g1")], rcs, jobs))
    check("a gated (unbound) pod is not bound", set(), bound_gangs([pod("n", "g1", node=None)], rcs, jobs))
    check("a finished pod is not bound", set(), bound_gangs([pod("n", "g1", phase="Succeeded")], rcs, jobs))
    check("a RayJob's cluster by its labels", {"u2"}, bound_gangs([pod("n", "job1-abcde")], rcs, jobs))
    check("a RayJob's submitter", {"u2"}, bound_gangs([pod("n", job="job1")], rcs, jobs))
    check("another namespace's pod of the same name is not", set(), bound_gangs([pod("m", "g1")], rcs, jobs))
    check("a RayCluster that is no copy", set(), bound_gangs([pod("n", "x")], rcs + [obj("n", "x")], jobs))
    check("bound in two workers: a violation", {"u1": ["a", "b"]}, judge({"a": {"u1", "u2"}, "b": {"u1"}}))
    check("bound in one each: none", {}, judge({"a": {"u1"}, "b": {"u2"}}))
    return 1 if fails else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--worker", action="append", default=[], help="NAME=SERVER,TOKEN-FILE,CA-FILE")
    ap.add_argument("--namespace", default="")
    ap.add_argument("--violations")
    ap.add_argument("--status")
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    if len(args.worker) < 2 or not args.violations or not args.status:
        ap.error("--worker (two or more), --violations and --status are required")
    run(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
