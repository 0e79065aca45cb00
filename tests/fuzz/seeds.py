#!/usr/bin/env python3
"""Seed corpora for the libFuzzer harnesses, from tests/fixtures.

    seeds.py FIXTURES OUT    writes OUT/<harness>/<name> files

admission:   the AdmissionReview bodies of fixtures/admission, fixtures/admission-fast, fixtures/bench and
             fixtures/hostile (the small ones), and every mutate fixture object
             (fixtures/mutate, fixtures/rayjob/mutate) wrapped in a CREATE review
             of its kind
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
