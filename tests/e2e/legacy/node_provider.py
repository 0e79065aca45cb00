#!/usr/bin/env python3
"""Stands in for the legacy Ray Kubernetes operator (Ray 1.x) in raygate's tests.

The operator is Python and needs Ray; it cannot be installed from the
registries this machine reaches. This script creates a legacy RayCluster's
pods against the real apiserver exactly as the operator's code does, from
ray-project/ray (Ray 1.x):

- python/ray/ray_operator/operator_utils.py, cr_to_config(): each pod type's
  podConfig gets a controller ownerReference to the RayCluster
  (blockOwnerDeletion true) and generateName "<cluster>-<podConfig's>";
- python/ray/autoscaler/_private/_kubernetes/node_provider.py, create_node():
  the podConfig's labels plus the autoscaler's tags ray-cluster-name,
  ray-node-uuid, ray-node-type (head/worker), ray-user-node-type,
  ray-node-name, ray-launch-config, ray-node-status; the head also
  cluster.ray.io/component=<cluster>-ray-head;
- python/ray/ray_operator/operator.py: the order. start_head() creates the
  head and waits for it to come up (its updater runs `ray start` in the head
  pod), and only then start_monitor() runs the autoscaler, whose first update
  creates every pod type's minWorkers workers.

It reads the RayCluster as stored (after raygate's webhook mutated it), as the
operator does from its watch. Usage:

    node_provider.py --server URL --token FILE --ca FILE --namespace NS CLUSTER
        [--head-timeout SECONDS]

Exits 0 once the head and the workers are created; 3 if the head does not
run within --head-timeout (the operator's updater gives up after 300 s).
"""
import argparse
import copy
import hashlib
import http.client
import json
import ssl
import sys
import time
import urllib.parse
import uuid


class Api:
    def __init__(self, server, token_file, ca):
        u = urllib.parse.urlparse(server)
        self.host, self.port = u.hostname, u.port or 443
        self.token = open(token_file).read().strip()
        self.ctx = ssl.create_default_context(cafile=ca)

    def call(self, method, path, body=None):
        conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=30)
        headers = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=headers)
        r = conn.getresponse()
        text = r.read()
        conn.close()
        if r.status >= 300:
            raise RuntimeError("%s %s: %d %s" % (method, path, r.status, text[:300]))
        return json.loads(text)


def owner_reference(cr):
    """operator_utils.get_cluster_owner_reference"""
    return {"apiVersion": cr["apiVersion"], "kind": cr["kind"], "blockOwnerDeletion": True, "controller": True,
            "name": cr["metadata"]["name"], "uid": cr["metadata"]["uid"]}


def node_types(cr):
    """operator_utils.get_node_types: the pod types' node configs."""
    name = cr["metadata"]["name"]
    ref = owner_reference(cr)
    types = {}
    for pod_type in cr["spec"]["podTypes"]:
        t = copy.deepcopy(pod_type)
        meta = t["podConfig"]["metadata"]
        meta["ownerReferences"] = [ref]
        meta["generateName"] = "%s-%s" % (name, meta["generateName"])
        if t["name"] == cr["spec"]["headPodType"]:
            meta.setdefault("labels", {})
        types[t["name"]] = t
    return types


def launch_hash(node_config):
    """The autoscaler's hash_launch_conf, in spirit: a digest of the node config (ray-launch-config)."""
    return hashlib.sha1(json.dumps(node_config, sort_keys=True).encode()).hexdigest()


def create_node(api, ns, cluster, node_config, tags, count):
    """node_provider.KubernetesNodeProvider.create_node"""
    pod = copy.deepcopy(node_config)
    tags = dict(tags)
    tags["ray-cluster-name"] = cluster
    tags["ray-node-uuid"] = str(uuid.uuid4())
    pod["metadata"]["namespace"] = ns
    pod["metadata"].setdefault("labels", {}).update(tags)
    if tags["ray-node-type"] == "head":
        pod["metadata"]["labels"]["cluster.ray.io/component"] = "%s-ray-head" % cluster
    names = []
    for _ in range(count):
        created = api.call("POST", "/api/v1/namespaces/%s/pods" % ns, pod)
        names.append(created["metadata"]["name"])
    return names


def tags_for(cluster, kind, type_name, node_config):
    return {"ray-node-type": kind, "ray-user-node-type": type_name, "ray-node-name": "ray-%s-%s" % (cluster, kind),
            "ray-launch-config": launch_hash(node_config), "ray-node-status": "uninitialized"}


def wait_running(api, ns, name, timeout):
    deadline = time.time() + timeout
    while time.time() < deadline:
        pod = api.call("GET", "/api/v1/namespaces/%s/pods/%s" % (ns, name))
        if pod.get("status", {}).get("phase") == "Running":
            return True
        time.sleep(0.5)
    return False


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--server", required=True)
    p.add_argument("--token", required=True)
    p.add_argument("--ca", required=True)
    p.add_argument("--namespace", required=True)
    p.add_argument("--head-timeout", type=float, default=300)
    p.add_argument("cluster")
    a = p.parse_args()
    api = Api(a.server, a.token, a.ca)
    cr = api.call("GET", "/apis/cluster.ray.io/v1/namespaces/%s/rayclusters/%s" % (a.namespace, a.cluster))
    types = node_types(cr)
    head_type = cr["spec"]["headPodType"]
    head_config = types[head_type]["podConfig"]
    (head,) = create_node(api, a.namespace, a.cluster, head_config, tags_for(a.cluster, "head", head_type, head_config), 1)
    print("created head %s; waiting for it to run (start_head)" % head, flush=True)
    if not wait_running(api, a.namespace, head, a.head_timeout):
        print("head %s did not run within %ss" % (head, a.head_timeout), flush=True)
        return 3
    left = cr["spec"].get("maxWorkers", 2**63 - 1)  # the autoscaler's max_workers caps min_workers
    for name, t in types.items():
        n = min(t.get("minWorkers", 0), t.get("maxWorkers", 2**63 - 1), left)
        left -= n
        if n > 0:
            workers = create_node(api, a.namespace, a.cluster, t["podConfig"], tags_for(a.cluster, "worker", name, t["podConfig"]), n)
            print("created %d %s workers: %s (start_monitor)" % (n, name, " ".join(workers)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
