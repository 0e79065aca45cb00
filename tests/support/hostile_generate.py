#!/usr/bin/env python3
"""Writes the bodies of the hostile-input catalogue that are too large to keep
in git (tests/fixtures/hostile/cases.json, cases with "generate").

    hostile_generate.py CASES_JSON OUTDIR    writes OUTDIR/<generate>.json
"""
import json
import os
import sys

LIMIT = 8 << 20  # the webhook's default --max-body-bytes


def review(kind, obj):
    group = "ray.io" if kind == "RayCluster" else ""
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "generated", "kind": {"group": group, "version": "v1", "kind": kind},
                        "operation": "CREATE", "namespace": "ns", "object": obj}}


def pod(annotations=None):
    meta = {"generateName": "c1-worker-", "namespace": "ns",
            "labels": {"ray.io/cluster": "c1", "volcano.sh/queue-name": "q"}}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": [{"name": "ray-worker"}]}}


def padded_pod(size):
    """A Pod review of exactly size bytes: an annotation takes up the rest."""
    empty = json.dumps(review("Pod", pod({"pad": ""}))).encode()
    return json.dumps(review("Pod", pod({"pad": "a" * (size - len(empty))}))).encode()


def deep_nesting():
    body = json.dumps(review("Pod", pod({"x": "y"})))
    depth = 100000
    return body.replace('"y"', "[" * depth + "]" * depth).encode()


def worker_groups(n, volumes=0):
    head = {"template": {"spec": {"containers": [{"name": "h", "resources": {"requests": {"cpu": "1"}}}]}}}
    workers = [{"groupName": "w%d" % i, "replicas": 1, "minReplicas": 0, "maxReplicas": 1,
                "template": {"spec": {"containers": [{"name": "w", "resources": {"requests": {"cpu": "100m"}}}]}}}
               for i in range(n)]
    if volumes:
        workers[0]["template"]["spec"]["volumes"] = [{}] * volumes
    rc = {"apiVersion": "ray.io/v1", "kind": "RayCluster",
          "metadata": {"name": "c1", "namespace": "ns", "labels": {"volcano.sh/queue-name": "q"}},
          "spec": {"headGroupSpec": head, "workerGroupSpecs": workers}}
    return json.dumps(review("RayCluster", rc)).encode()


GENERATORS = {
    "deep-nesting": deep_nesting,
    "worker-groups": lambda: worker_groups(10000),
    "worker-groups-5000": lambda: worker_groups(5000),
    "empty-objects-3mb": lambda: worker_groups(1, volumes=(3 << 20) // 4),
    "under-limit": lambda: padded_pod(LIMIT - 1),
    "over-limit": lambda: padded_pod(LIMIT + 1),
    "over-16mib": lambda: padded_pod((16 << 20) + 1),
    "commas-in-string": lambda: json.dumps(review("Pod", pod({"note": '\\",{[' * 100000}))).encode(),
}

cases, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
for case in json.load(open(cases))["cases"]:
    if "generate" in case:
        with open(os.path.join(out, case["generate"] + ".json"), "wb") as f:
            f.write(GENERATORS[case["generate"]]())
