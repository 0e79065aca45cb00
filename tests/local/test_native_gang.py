#!/usr/bin/env python3
"""--native-gang on the real webhook binary (webhook/nativegang.h): the
decision taken once at start-up, logged, exported as raygate_webhook_native_gang,
and what a Pod CREATE's answer then carries. auto asks a fake API server (plain
HTTP on loopback, Python standard library) for the discovery of
scheduling.k8s.io/v1beta1: served with podgroups, on; a 404 or no API at all,
off; on and off ask nothing.

    test_native_gang.py BUILD_DIR FIXTURES_DIR
"""
import base64
import http.server
import json
import os
import sys
import tempfile
import threading
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from webhook import Webhook, fail, free_port, say  # noqa: E402

build, fixtures = sys.argv[1:3]
DISCOVERY = "/apis/scheduling.k8s.io/v1beta1"
SERVED = {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "scheduling.k8s.io/v1beta1",
          "resources": [{"name": "workloads", "namespaced": True, "kind": "Workload"},
                        {"name": "podgroups", "namespaced": True, "kind": "PodGroup"}]}

# No API but the one a case gives: the webhook must not find one in the environment.
for var in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
    os.environ.pop(var, None)


def kubeconfig(directory, port):
    """A kubeconfig in directory for an API server at http://127.0.0.1:port, without credentials; its path."""
    path = os.path.join(directory, "kubeconfig")
    with open(path, "w") as f:
        f.write("apiVersion: v1\nkind: Config\ncurrent-context: fake\ncontexts:\n- name: fake\n  context: {cluster: fake}\n"
                "clusters:\n- name: fake\n  cluster: {server: \"http://127.0.0.1:%d\"}\n" % port)
    return path


class FakeAPI:
    """An API server that answers discovery (SERVED, or 404 when served is False) and 404 to everything else."""

    def __init__(self, served):
        self.requests = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                outer.requests.append(self.path)
                if self.path == DISCOVERY and served:
                    body, code = json.dumps(SERVED).encode(), 200
                else:
                    body, code = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound",
                                             "code": 404, "message": "not found"}).encode(), 404
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.dir = tempfile.TemporaryDirectory(prefix="raygate-fakeapi-")
        self.kubeconfig = kubeconfig(self.dir.name, self.server.server_port)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.dir.cleanup()


def pod_patch(wh):
    """The JSON Patch the webhook answers to fixtures/admission/pod-create.json's Pod CREATE (a list)."""
    with open(os.path.join(fixtures, "admission", "pod-create.json")) as f:
        review = json.load(f)["review"]
    # A gang member: its template carries the mark the RayCluster's mutation writes (docs/native-gang.md).
    meta = review["request"]["object"]["metadata"]
    meta.setdefault("annotations", {})["raygate.io/gang-member"] = "true"
    req = urllib.request.Request(wh.url("/mutate"), data=json.dumps(review).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10, context=wh.ssl_context()) as r:
        answer = json.loads(r.read())
    return json.loads(base64.b64decode(answer["response"]["patch"]))


def log_text(wh):
    with open(wh.log, "rb") as f:
        return f.read().decode(errors="replace")


def check(name, args, want_on, want_log, api=None):
    with Webhook(build, args) as wh:
        on = wh.metric("raygate_webhook_native_gang")
        patch = pod_patch(wh)
        text = log_text(wh)
    paths = [op["path"] for op in patch]
    group = [op["value"] for op in patch if op["path"] == "/spec/schedulingGroup"]
    if on != (1.0 if want_on else 0.0):
        fail("%s: raygate_webhook_native_gang is %s, want %d" % (name, on, want_on))
    if want_on and group != [{"podGroupName": "ray-c1-pg"}]:
        fail("%s: the patch %s does not name ray-c1-pg in /spec/schedulingGroup" % (name, patch))
    if not want_on and paths != ["/spec/schedulingGates", "/metadata/annotations/scheduling.k8s.io~1group-name"]:
        fail("%s: the patch %s is not the gate and the annotation alone" % (name, patch))
    lines = [line for line in text.splitlines() if "native gang step" in line]
    if len(lines) != 1 or want_log not in lines[0]:
        fail("%s: the decision should be logged once, with %r; got %s" % (name, want_log, lines))
    if api is not None:
        asked = api.requests.count(DISCOVERY)
        if asked != (1 if "auto" in args else 0):
            fail("%s: discovery asked %d times" % (name, asked))
    say("ok %s: %s" % (name, lines[0]))


check("on, no API", ["--native-gang", "on"], True, "step on (as --native-gang says)")
check("off, no API", ["--native-gang", "off"], False, "as --native-gang says")
check("auto, no API", ["--native-gang", "auto"], False, "no Kubernetes API to ask")
with FakeAPI(served=True) as api:
    check("auto, served", ["--kubeconfig", api.kubeconfig, "--native-gang", "auto"], True, "serves podgroups", api)
# The default is off (opt-in for now: docs/native-gang.md), even where the API serves podgroups: nothing is asked.
with FakeAPI(served=True) as api:
    check("no flag, served", ["--kubeconfig", api.kubeconfig], False, "as --native-gang says", api)
with FakeAPI(served=True) as api:
    check("off, served", ["--kubeconfig", api.kubeconfig, "--native-gang", "off"], False, "as --native-gang says", api)
with FakeAPI(served=False) as api:
    check("auto, not served", ["--kubeconfig", api.kubeconfig, "--native-gang", "auto"], False, "does not serve", api)
# An API that does not answer at all (nothing listens on its port): off, said as a warning.
with tempfile.TemporaryDirectory(prefix="raygate-deadapi-") as d:
    check("auto, API down", ["--kubeconfig", kubeconfig(d, free_port()), "--native-gang", "auto"], False, "discovery failed")
say("native gang: 8 start-ups, each decided as expected")
