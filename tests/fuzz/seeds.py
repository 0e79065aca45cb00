#!/usr/bin/env python3
"""Seed corpora for the libFuzzer harnesses, from tests/fixtures.

    seeds.py FIXTURES OUT    writes OUT/<harness>/<name> files

admission:   the AdmissionReview bodies of fixtures/admission, fixtures/admission-fast, fixtures/bench and
             fixtures/hostile (the small ones), and every mutate fixture object
             (fixtures/mutate, fixtures/rayjob/mutate) wrapped in a CREATE review
             of its kind
dra:         selectors (first byte 0) and a DeviceClass, ResourceSlice and claim spec (1, 2, 3), written here
gang:        the RayCluster objects of fixtures/gang, fixtures/legacy (the legacy
             operator's) and fixtures/mutate/raycluster
kubeconfig:  fixtures/kubeconfig/*.yaml as they are
quantity:    each input of fixtures/quantity/parse.txt, once per unit (first byte)
watchstream: fixtures/watchstream/*.jsonl behind the harness's two control bytes
             and one cut length
"""
import glob
import json
import os
import sys

fixtures, out = sys.argv[1], sys.argv[2]


def put(harness, name, data):
    d = os.path.join(out, harness)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def review(kind, obj, uid):
    group, version = ("ray.io", "v1") if kind in ("RayCluster", "RayJob") else ("", "v1")
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": {"uid": uid, "kind": {"group": group, "version": version, "kind": kind},
                                   "operation": "CREATE", "object": obj}})


def base(path):
    return os.path.splitext(os.path.basename(path))[0]


for path in sorted(glob.glob(os.path.join(fixtures, "admission", "*.json"))):
    c = json.load(open(path))
    put("admission", base(path), c["body"] if "body" in c else json.dumps(c["review"]))
for path in sorted(glob.glob(os.path.join(fixtures, "admission-fast", "*.json"))):
    put("admission", "fast-" + base(path), json.dumps(json.load(open(path))["review"]))
for path in sorted(glob.glob(os.path.join(fixtures, "bench", "*.json"))):
    put("admission", "bench-" + base(path), open(path, "rb").read())
for path in sorted(glob.glob(os.path.join(fixtures, "hostile", "bodies", "*"))):
    if os.path.getsize(path) <= 64 << 10:
        put("admission", "hostile-" + base(path), open(path, "rb").read())
for kind, sub in (("Pod", "mutate/pod"), ("Pod", "mutate/pod-native"), ("RayCluster", "mutate/raycluster"),
                  ("RayJob", "rayjob/mutate")):
    for path in sorted(glob.glob(os.path.join(fixtures, sub, "*.json"))):
        c = json.load(open(path))
        name = ("native-" if sub.endswith("-native") else "") + base(path)
        put("admission", "mutate-" + kind.lower() + "-" + name, review(kind, c["object"], base(path)))
        if kind == "RayCluster":
            put("gang", "mutate-" + base(path), json.dumps(c["object"]))

for path in sorted(glob.glob(os.path.join(fixtures, "legacy", "*.json"))):
    put("gang", "legacy-" + base(path), json.dumps(json.load(open(path))["raycluster"]))
for path in sorted(glob.glob(os.path.join(fixtures, "gang", "*.json"))):
    c = json.load(open(path))
    if "raycluster" in c:
        put("gang", base(path), json.dumps(c["raycluster"]))

for path in sorted(glob.glob(os.path.join(fixtures, "kubeconfig", "*.yaml"))):
    put("kubeconfig", base(path), open(path, "rb").read())

n = 0
for line in open(os.path.join(fixtures, "quantity", "parse.txt")):
    if line.startswith("#") or "|" not in line:
        continue
    text = line.split("|")[0]
    put("quantity", "q%03d-base" % n, b"\x00" + text.encode())
    put("quantity", "q%03d-milli" % n, b"\x01" + text.encode())
    n += 1

for path in sorted(glob.glob(os.path.join(fixtures, "watchstream", "*.jsonl"))):
    data = open(path, "rb").read()
    put("watchstream", base(path), b"\x00\x00\x10" + data)
    put("watchstream", base(path) + "-stop", b"\x00\x01\x07" + data)

DRA_SELECTORS = [
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'",
    'device.attributes["gpu.example.com"].model == "a100" || !(device.attributes["x.io"].index >= 2)',
    'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0',
    'device.attributes["gpu.example.com"].driverVersion.isLessThan(semver("1.2.3-rc.1+b"))',
    "'type' in device.attributes['x.io'] && device.attributes['x.io'].type in ['gpu', 'mig']",
    'device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model.matches("^a1")',
    'device.driver == "gpu.example.com" && device.attributes[',
]
DRA_OBJECTS = [
    (1, {"metadata": {"name": "gpu.nvidia.com", "annotations": {"raygate.io/quota-resource": "nvidia.com/gpu"}},
         "spec": {"selectors": [{"cel": {"expression": DRA_SELECTORS[0]}}], "extendedResourceName": "example.com/gpu"}}),
    (2, {"metadata": {"name": "s"}, "spec": {"driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 1},
         "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a100"}, "index": {"int": 0}, "ok": {"bool": True},
                                                      "v": {"version": "1.2.3"}},
                      "capacity": {"memory": {"value": "80Gi"}}}]}}),
    (3, {"devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "c", "count": 2,
                                                            "selectors": [{"cel": {"expression": DRA_SELECTORS[2]}}]}},
                                  {"name": "b", "exactly": {"deviceClassName": "c", "allocationMode": "All"}},
                                  {"name": "m", "firstAvailable": [{"name": "x", "deviceClassName": "c"}]}]}}),
]
for i, expr in enumerate(DRA_SELECTORS):
    put("dra", "selector-%d" % i, b"\x00" + expr.encode())
for kind, obj in DRA_OBJECTS:
    put("dra", "object-%d" % kind, bytes([kind]) + json.dumps(obj).encode())
