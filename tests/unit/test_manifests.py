#!/usr/bin/env python3
"""Checks manifests/ (every YAML document kustomization.yaml lists) and the Helm
chart charts/raygate:

- every container of every workload (Deployment, Job, ...): runs as non-root,
  read-only root filesystem, no privilege escalation, not privileged, all
  capabilities dropped and none added, seccomp RuntimeDefault, a memory limit;
- RBAC is exactly tests/fixtures/manifests/rbac.json, verb by verb: no rule
  added, widened or missing, no wildcard, no binding to another subject; each
  workload runs under the service account listed there (the webhook's may
  only list and watch Queues and the DRA objects that size a gang);
- with --helm: `helm lint` passes; `helm template` with the default values
  renders exactly the objects of manifests/ (but the Namespace, which Helm's
  --create-namespace makes), CRDs included, and passes the same checks; other
  values render what they say (chart_cases below); invalid values are refused.

    test_manifests.py MANIFESTS_DIR FIXTURES_DIR [--helm HELM --chart CHART_DIR]
                      [--rbac RBAC_JSON --containers N]

--rbac and --containers check another kustomization (manifests/dispatch/)
against its own reviewed RBAC, with at least N containers.
"""
import json
import os
import subprocess
import sys

import yaml

manifests, fixtures = sys.argv[1:3]
opts = dict(zip(sys.argv[3::2], sys.argv[4::2]))
errors = []

WORKLOADS = ("Deployment", "Job", "DaemonSet", "StatefulSet", "CronJob", "Pod")


def check(docs, label, rbac=True, containers=3):
    """Hardening of every workload in docs and (rbac) RBAC exactly as reviewed; messages start with label."""
    def err(msg):
        errors.append("%s: %s" % (label, msg))

    by_key = {"%s/%s" % (d["kind"], d["metadata"]["name"]): d for d in docs}
    WORKLOADS = ("Deployment", "Job", "DaemonSet", "StatefulSet", "CronJob", "Pod")
    checked = 0
    for key, d in by_key.items():
        if d["kind"] not in WORKLOADS:
            continue
        spec = d["spec"]
        if d["kind"] == "CronJob":
            spec = spec["jobTemplate"]["spec"]
        pod = spec if d["kind"] == "Pod" else spec["template"]["spec"]
        psc = pod.get("securityContext", {})
        if psc.get("runAsNonRoot") is not True:
            err("%s: pod securityContext.runAsNonRoot is not true" % key)
        if psc.get("runAsUser", 1) == 0 or psc.get("runAsGroup", 1) == 0:
            err("%s: pod runs as uid or gid 0" % key)
        for field in ("hostNetwork", "hostPID", "hostIPC"):
            if pod.get(field):
                err("%s: %s" % (key, field))
        for c in pod.get("initContainers", []) + pod.get("containers", []):
            where = "%s container %s" % (key, c["name"])
            sc = c.get("securityContext", {})
            checked += 1
            if sc.get("allowPrivilegeEscalation") is not False:
                err("%s: allowPrivilegeEscalation is not false" % where)
            if sc.get("readOnlyRootFilesystem") is not True:
                err("%s: readOnlyRootFilesystem is not true" % where)
            if sc.get("privileged"):
                err("%s: privileged" % where)
            caps = sc.get("capabilities", {})
            if "ALL" not in caps.get("drop", []) or caps.get("add"):
                err("%s: capabilities must drop ALL and add none" % where)
            if sc.get("runAsNonRoot") is False or sc.get("runAsUser", 1) == 0:
                err("%s: overrides non-root" % where)
            seccomp = sc.get("seccompProfile", psc.get("seccompProfile", {})).get("type")
            if seccomp != "RuntimeDefault":
                err("%s: seccompProfile %s, want RuntimeDefault" % (where, seccomp))
            if "memory" not in c.get("resources", {}).get("limits", {}):
                err("%s: no memory limit" % where)
    if checked < containers:
        err("only %d containers found" % checked)
    if not rbac:
        return
    want = json.load(open(opts.get("--rbac", os.path.join(fixtures, "manifests", "rbac.json"))))

    def norm(rule):
        return {k: sorted(rule.get(k, [])) for k in ("apiGroups", "resources", "resourceNames", "verbs", "nonResourceURLs")}

    roles = {k: d for k, d in by_key.items() if d["kind"] in ("Role", "ClusterRole")}
    for key in sorted(set(roles) | set(want["roles"])):
        if key not in roles:
            err("%s: in rbac.json, not rendered" % key)
            continue
        if key not in want["roles"]:
            err("%s: not reviewed in tests/fixtures/manifests/rbac.json" % key)
            continue
        got = sorted(json.dumps(norm(r), sort_keys=True) for r in roles[key].get("rules", []))
        exp = sorted(json.dumps(norm(r), sort_keys=True) for r in want["roles"][key])
        for r in sorted(set(got) - set(exp)):
            err("%s: rule not reviewed (or widened): %s" % (key, r))
        for r in sorted(set(exp) - set(got)):
            err("%s: reviewed rule missing: %s" % (key, r))
        for r in roles[key].get("rules", []):
            for field in ("apiGroups", "resources", "verbs"):
                if "*" in r.get(field, []):
                    err("%s: wildcard in %s" % (key, field))
            if set(r.get("verbs", [])) & {"escalate", "bind", "impersonate"}:
                err("%s: escalate, bind or impersonate" % key)

    bindings = {k: d for k, d in by_key.items() if d["kind"] in ("RoleBinding", "ClusterRoleBinding")}
    for key in sorted(set(bindings) | set(want["bindings"])):
        if key not in bindings or key not in want["bindings"]:
            err("%s: binding in only one of the objects and rbac.json" % key)
            continue
        b, w = bindings[key], want["bindings"][key]
        role = "%s/%s" % (b["roleRef"]["kind"], b["roleRef"]["name"])
        subjects = sorted("%s/%s" % (s.get("namespace", b["metadata"].get("namespace")), s["name"]) for s in b["subjects"]
                          if s["kind"] == "ServiceAccount")
        if role != w["role"] or subjects != sorted(w["subjects"]) or len(subjects) != len(b["subjects"]):
            err("%s: binds %s to %s, reviewed %s to %s" % (key, role, subjects, w["role"], w["subjects"]))

    bound = {s for w in want["bindings"].values() for s in w["subjects"]}
    for key, w in want["serviceAccounts"].items():
        d = by_key.get(key)
        if d is None:
            err("%s: missing" % key)
            continue
        pod = d["spec"]["template"]["spec"]
        sa = pod.get("serviceAccountName", "default")
        if sa != w["serviceAccount"]:
            err("%s: service account %s, reviewed %s" % (key, sa, w["serviceAccount"]))
        if "automountServiceAccountToken" in w and pod.get("automountServiceAccountToken") != w["automountServiceAccountToken"]:
            err("%s: automountServiceAccountToken %s, want %s" % (key, pod.get("automountServiceAccountToken"),
                                                                w["automountServiceAccountToken"]))
        if w["serviceAccount"] == "default" and any(s.endswith("/default") for s in bound):
            err("%s: runs as the default service account, which is bound to a role" % key)


def load_manifests():
    docs = []
    kustomization = yaml.safe_load(open(os.path.join(manifests, "kustomization.yaml")))
    for res in kustomization["resources"]:
        for d in yaml.safe_load_all(open(os.path.join(manifests, res))):
            if d:
                docs.append(d)
    return docs


manifest_docs = load_manifests()
check(manifest_docs, manifests if "--rbac" in opts else "manifests/", containers=int(opts.get("--containers", 3)))
if "--helm" in opts:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import chart_cases

    helm = opts["--helm"]
    if helm == "auto":  # RAYGATE_HELM, else the one hack/build-upstream.sh builds
        root = os.path.dirname(os.path.abspath(manifests))
        helm = os.environ.get("RAYGATE_HELM") or subprocess.run(
            ["bash", "-c", '. "$1/hack/versions.sh" && echo "$HELM_BIN/helm"', "-", root],
            capture_output=True, text=True).stdout.strip()
    if not os.access(helm, os.X_OK):
        errors.append("helm not found at %s: run hack/build-upstream.sh (or set RAYGATE_HELM)" % helm)
    else:
        errors += chart_cases.run(helm, opts["--chart"], manifest_docs, check)

for e in errors:
    print("FAIL: " + e)
if errors:
    sys.exit(1)
print("ok: manifests/%s hardened, RBAC exactly as reviewed" % (" and the chart" if "--helm" in opts else ""))
