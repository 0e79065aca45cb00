"""The Helm chart charts/raygate, for test_manifests.py: lint, the default
render against manifests/, and what each value changes."""
import json
import subprocess

import yaml

NS = "raygate-system"


def render(helm, chart, values=None, namespace=NS):
    """Objects `helm template` renders (CRDs included); raises on a refused render."""
    cmd = [helm, "template", "raygate", chart, "--namespace", namespace, "--include-crds"]
    for k, v in (values or {}).items():
        cmd += ["--set-json", "%s=%s" % (k, json.dumps(v))]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip())
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def refused(helm, chart, values, want):
    """None when helm template refuses values with a message containing want; else what went wrong."""
    try:
        render(helm, chart, values)
    except RuntimeError as e:
        return None if want in str(e) else "refused %s, but with: %s" % (values, e)
    return "rendered %s, which it must refuse (%s)" % (values, want)


def key(d):
    return "%s/%s" % (d["kind"], d["metadata"]["name"])


def diff(a, b, path=""):
    """First difference between two parsed objects, as text; None when equal."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return "%s.%s: manifests %s, chart %s" % (path, k, json.dumps(a.get(k)), json.dumps(b.get(k)))
            d = diff(a[k], b[k], "%s.%s" % (path, k))
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            d = diff(x, y, "%s[%d]" % (path, i))
            if d:
                return d
        return None
    return None if a == b else "%s: manifests %s, chart %s" % (path, json.dumps(a), json.dumps(b))


def container(docs, name):
    d = {key(x): x for x in docs}[name]
    return d["spec"]["template"]["spec"]["containers"][0]


def run(helm, chart, manifest_docs, check):
    errors = []

    def expect(cond, msg):
        if not cond:
            errors.append("chart: " + msg)

    lint = subprocess.run([helm, "lint", "--strict", chart, "--namespace", NS], capture_output=True, text=True)
    expect(lint.returncode == 0, "helm lint --strict: " + (lint.stdout + lint.stderr).strip().replace("\n", " | "))

    # Default values: exactly manifests/, but the Namespace.
    try:
        docs = render(helm, chart)
    except RuntimeError as e:
        return ["chart: helm template with the default values: %s" % e]
    check(docs, "chart (default values)")
    want = {key(d): d for d in manifest_docs if d["kind"] != "Namespace"}
    got = {key(d): d for d in docs}
    for k in sorted(set(want) - set(got)):
        expect(False, "%s is in manifests/, not rendered" % k)
    for k in sorted(set(got) - set(want)):
        expect(False, "%s is rendered, not in manifests/" % k)
    for k in sorted(set(want) & set(got)):
        d = diff(want[k], got[k], k)
        expect(d is None, "default render differs from manifests/: %s" % d)

    # Another namespace: every namespaced object, the certificate's names and the selector follow it.
    docs = render(helm, chart, namespace="rg")
    for d in docs:
        if d["kind"] not in ("ClusterRole", "ClusterRoleBinding", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
                             "CustomResourceDefinition"):
            expect(d["metadata"].get("namespace") == "rg", "%s not in the release namespace rg" % key(d))
    certs = container(docs, "Job/raygate-certs")
    expect("raygate-webhook.rg.svc" in certs["args"] and certs["args"][certs["args"].index("--namespace") + 1] == "rg",
           "the certificate Job does not follow the namespace: %s" % certs["args"])
    mwc = {key(d): d for d in docs}["MutatingWebhookConfiguration/raygate"]
    for w in mwc["webhooks"]:
        expect(w["clientConfig"]["service"]["namespace"] == "rg", "%s: service not in rg" % w["name"])
        expect(w["namespaceSelector"]["matchExpressions"][0]["values"] == ["kube-system", "rg"],
               "%s: the default namespaceSelector does not exclude rg" % w["name"])
    for w in {key(d): d for d in docs}["ValidatingWebhookConfiguration/raygate"]["webhooks"]:
        expect(w["clientConfig"]["service"]["namespace"] == "rg", "%s: service not in rg" % w["name"])

    # image, replicas, resources.
    docs = render(helm, chart, {"image": {"repository": "example.org/rg", "tag": "t1", "pullPolicy": "Never"},
                                "webhook.replicas": 3, "gate.replicas": 4,
                                "webhook.resources": {"limits": {"memory": "99Mi"}}})
    for name in ("Deployment/raygate-webhook", "Deployment/raygate-gate", "Job/raygate-certs"):
        c = container(docs, name)
        expect(c["image"] == "example.org/rg:t1" and c.get("imagePullPolicy") == "Never",
               "%s: image %s %s" % (name, c["image"], c.get("imagePullPolicy")))
    by = {key(d): d for d in docs}
    expect(by["Deployment/raygate-webhook"]["spec"]["replicas"] == 3, "webhook.replicas not rendered")
    expect(by["Deployment/raygate-gate"]["spec"]["replicas"] == 4, "gate.replicas not rendered")
    expect(container(docs, "Deployment/raygate-webhook")["resources"]["limits"] == {"memory": "99Mi"},
           "webhook.resources not rendered")
    check(docs, "chart (image, replicas)")

    # failurePolicy and namespaceSelector, on both webhooks.
    sel = {"matchLabels": {"raygate.io/enabled": "true"}}
    docs = render(helm, chart, {"webhook.failurePolicy": "Ignore", "webhook.namespaceSelector": sel})
    mwc = {key(d): d for d in docs}["MutatingWebhookConfiguration/raygate"]
    for w in mwc["webhooks"]:
        expect(w["failurePolicy"] == "Ignore", "%s: failurePolicy %s" % (w["name"], w["failurePolicy"]))
        expect(w["namespaceSelector"] == sel, "%s: namespaceSelector %s" % (w["name"], w["namespaceSelector"]))
    r = refused(helm, chart, {"webhook.failurePolicy": "Sometimes"}, "failurePolicy must be Fail or Ignore")
    expect(r is None, str(r))

    # cert-manager instead of the bootstrap Job.
    docs = render(helm, chart, {"certificates.mode": "cert-manager"})
    by = {key(d): d for d in docs}
    for k in ("Job/raygate-certs", "Role/raygate-certs", "ClusterRole/raygate-certs", "ServiceAccount/raygate-certs"):
        expect(k not in by, "cert-manager mode still renders %s" % k)
    cert = by.get("Certificate/raygate-webhook-tls")
    expect(cert is not None and cert["spec"]["secretName"] == "raygate-webhook-tls" and
           cert["spec"]["dnsNames"][0] == "raygate-webhook.%s.svc" % NS and
           cert["spec"]["issuerRef"] == {"kind": "Issuer", "name": "raygate-selfsigned"} and "Issuer/raygate-selfsigned" in by,
           "cert-manager mode: no Certificate for raygate-webhook-tls from the self-signed Issuer")
    for k in ("MutatingWebhookConfiguration/raygate", "ValidatingWebhookConfiguration/raygate"):
        expect(by[k]["metadata"].get("annotations", {}).get("cert-manager.io/inject-ca-from") == "%s/raygate-webhook-tls" % NS,
               "cert-manager mode: no inject-ca-from annotation on %s" % k)
    check(docs, "chart (cert-manager)", rbac=False, containers=2)
    issuer = {"kind": "ClusterIssuer", "name": "corp-ca", "group": "cert-manager.io"}
    docs = render(helm, chart, {"certificates.mode": "cert-manager", "certificates.certManager.issuerRef": issuer})
    by = {key(d): d for d in docs}
    expect("Issuer/raygate-selfsigned" not in by and by["Certificate/raygate-webhook-tls"]["spec"]["issuerRef"] == issuer,
           "certificates.certManager.issuerRef not used")
    r = refused(helm, chart, {"certificates.mode": "manual"}, "certificates.mode must be bootstrap or cert-manager")
    expect(r is None, str(r))

    # Leader election off: one replica, no --leader-elect, no Lease Role; more replicas refused.
    docs = render(helm, chart, {"gate.leaderElection.enabled": False, "gate.replicas": 1})
    by = {key(d): d for d in docs}
    expect("--leader-elect" not in container(docs, "Deployment/raygate-gate")["args"], "leader election off still passes --leader-elect")
    expect("Role/raygate-gate-leader-election" not in by, "leader election off still renders its Role")
    r = refused(helm, chart, {"gate.leaderElection.enabled": False}, "needs gate.leaderElection.enabled")
    expect(r is None, str(r))

    # The gate's flags.
    docs = render(helm, chart, {"gate.leaderElection.leaseDuration": 20, "gate.leaderElection.renewDeadline": 12,
                                "gate.leaderElection.retryPeriod": 3, "gate.resync": 60, "gate.logLevel": "debug",
                                "gate.extraArgs": ["--context", "x"], "metrics.port": 9191})
    args = container(docs, "Deployment/raygate-gate")["args"]
    for flag, v in (("--leader-elect-lease-duration", "20"), ("--leader-elect-renew-deadline", "12"),
                    ("--leader-elect-retry-period", "3"), ("--resync", "60"), ("--log-level", "debug"),
                    ("--metrics-addr", ":9191"), ("--context", "x")):
        expect(flag in args and args[args.index(flag) + 1] == v, "gate args %s lack %s %s" % (args, flag, v))
    by = {key(d): d for d in docs}
    expect(by["Service/raygate-gate-metrics"]["spec"]["ports"][0]["port"] == 9191, "metrics.port not on the Service")

    # Preemption is on by default (no flag, as in manifests/); gate.preemption=false turns it off.
    expect(not any(a.startswith("--preemption") for a in container(render(helm, chart), "Deployment/raygate-gate")["args"]),
           "the default render passes a --preemption flag")
    args = container(render(helm, chart, {"gate.preemption": False}), "Deployment/raygate-gate")["args"]
    expect("--preemption=false" in args, "gate.preemption=false: args %s lack --preemption=false" % args)
    r = refused(helm, chart, {"gate.preemption": "no"}, "gate.preemption must be true or false")
    expect(r is None, str(r))

    # nativeGang: off by default (no flag, as in manifests/: the programs' default); on and auto go to both.
    for name in ("Deployment/raygate-gate", "Deployment/raygate-webhook"):
        expect("--native-gang" not in container(render(helm, chart), name)["args"], "the default render passes --native-gang")
    for mode in ("on", "auto"):
        docs = render(helm, chart, {"nativeGang": mode})
        for name in ("Deployment/raygate-gate", "Deployment/raygate-webhook"):
            args = container(docs, name)["args"]
            expect("--native-gang" in args and args[args.index("--native-gang") + 1] == mode,
                   "nativeGang=%s: %s args %s lack --native-gang %s" % (mode, name, args, mode))
    r = refused(helm, chart, {"nativeGang": "yes"}, "nativeGang must be auto, on or off")
    expect(r is None, str(r))

    # webhook.holdGangs: wait by default (no flag, the program's default); decide and off go to the webhook only.
    expect("--hold-gangs" not in container(render(helm, chart), "Deployment/raygate-webhook")["args"],
           "the default render passes --hold-gangs")
    for mode in ("decide", "off"):
        docs = render(helm, chart, {"webhook.holdGangs": mode})
        args = container(docs, "Deployment/raygate-webhook")["args"]
        expect("--hold-gangs" in args and args[args.index("--hold-gangs") + 1] == mode,
               "webhook.holdGangs=%s: args %s lack --hold-gangs %s" % (mode, args, mode))
        expect("--hold-gangs" not in container(docs, "Deployment/raygate-gate")["args"], "the gate got --hold-gangs")
    r = refused(helm, chart, {"webhook.holdGangs": "yes"}, "webhook.holdGangs must be decide, wait or off")
    expect(r is None, str(r))

    # The webhook's flags.
    docs = render(helm, chart, {"webhook.shutdownDelay": "7s", "webhook.extraArgs": ["--log-level", "debug"]})
    args = container(docs, "Deployment/raygate-webhook")["args"]
    expect(args[args.index("--shutdown-delay") + 1] == "7s" and args[-2:] == ["--log-level", "debug"],
           "webhook args %s lack --shutdown-delay 7s and the extra args" % args)

    # Metrics: the ServiceMonitor toggle selects the metrics Service.
    docs = render(helm, chart, {"metrics.serviceMonitor.enabled": True, "metrics.serviceMonitor.labels": {"release": "prom"}})
    by = {key(d): d for d in docs}
    sm = by.get("ServiceMonitor/raygate-gate")
    svc = by["Service/raygate-gate-metrics"]
    expect(sm is not None and sm["metadata"]["labels"].get("release") == "prom" and
           all(svc["metadata"]["labels"].get(k) == v for k, v in sm["spec"]["selector"]["matchLabels"].items()) and
           sm["spec"]["endpoints"][0]["port"] == "metrics", "serviceMonitor: missing, or does not select raygate-gate-metrics")
    expect("ServiceMonitor/raygate-gate" not in {key(d) for d in render(helm, chart)}, "a ServiceMonitor by default")
    return errors
