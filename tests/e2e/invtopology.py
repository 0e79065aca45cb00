"""The invariant checker's topology check, used by invariants.py.

topology-split  a pod of an admitted, topology-constrained RayCluster is bound
                to a node outside the domain recorded for its set in the
                RayCluster's raygate.io/topology-placed annotation (JSON:
                {"gang": D, "group/NAME": D, "slice/REPLICA": D, "spread": true},
                lib/sched/place/topoconfine.h).

A set's domain D is a value of a node label, the key being what the set's
constraint names (raygate.io/topology-required or -preferred on the RayCluster
for the gang; on the worker group's template for a group or its slices, else
the gang's), or, for Volcano's labels (volcano.sh/network-topology-mode on the
RayCluster), the name of a HyperNode (topology.volcano.sh/v1alpha1), whose
nodes are resolved here independently of the gate controller. The sets:
- "gang": every pod but the head (the head too with raygate.io/topology-include-head "true");
- "group/NAME": the pods of worker group NAME (label ray.io/group);
- "slice/REPLICA": the pods labelled ray.io/worker-group-replica-name REPLICA.
A pod may be in several (a slice within the gang). A set absent from the record
(a soft set placed across domains: "spread") is not judged, nor are pods being
deleted or finished, nor pods on nodes that are gone.
"""
import json
import re

PLACED = "raygate.io/topology-placed"
REQUIRED = "raygate.io/topology-required"
PREFERRED = "raygate.io/topology-preferred"
INCLUDE_HEAD = "raygate.io/topology-include-head"
VOLCANO_MODE = "volcano.sh/network-topology-mode"
REPLICA = "ray.io/worker-group-replica-name"
HYPERNODE = ("hypernode",)


def constraint(meta):
    """What an object's metadata asks: ("label", KEY), HYPERNODE, or None."""
    ann, labels = meta.get("annotations") or {}, meta.get("labels") or {}
    key = ann.get(REQUIRED) or ann.get(PREFERRED)
    if key:
        return ("label", key)
    if labels.get(VOLCANO_MODE) or ann.get(VOLCANO_MODE):
        return HYPERNODE
    return None


def _label_match(sel, labels):
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in sel.get("matchExpressions") or []:
        op, have, vals = e.get("operator"), labels.get(e.get("key")), e.get("values") or []
        ok = {"In": have in vals, "NotIn": have not in vals, "Exists": have is not None,
              "DoesNotExist": have is None}.get(op, False)
        if not ok:
            return False
    return True


def _selects(selector, name, labels):
    if "exactMatch" in selector:
        return (selector["exactMatch"] or {}).get("name") == name
    if "regexMatch" in selector:
        try:
            return re.search((selector["regexMatch"] or {}).get("pattern") or "", name) is not None
        except re.error:
            return False
    if "labelMatch" in selector:
        return labels is not None and _label_match(selector["labelMatch"] or {}, labels)
    return False


def resolve_hypernodes(hypernodes, nodes):
    """{HyperNode name: set of node names it covers, children included}; nodes: the Node objects."""
    by_name = {h["metadata"]["name"]: h for h in hypernodes}
    node_labels = {n["metadata"]["name"]: n["metadata"].get("labels") or {} for n in nodes}
    memo = {}

    def cover(name, seen):
        if name in memo:
            return memo[name]
        if name in seen:
            return set()  # a cycle: the gate ignores such a HyperNode; cover nothing through it
        out = set()
        for m in (by_name[name].get("spec") or {}).get("members") or []:
            sel = m.get("selector") or {}
            if m.get("type") == "HyperNode":
                for child in by_name:
                    if child != name and _selects(sel, child, None):
                        out |= cover(child, seen | {name})
            else:
                out |= {n for n, labels in node_labels.items() if _selects(sel, n, labels)}
        memo[name] = out
        return out

    return {name: cover(name, frozenset()) for name in by_name}


def _group_constraints(rc):
    """{groupName: its template's constraint or None}."""
    out = {}
    for g in (rc.get("spec") or {}).get("workerGroupSpecs") or []:
        out[g.get("groupName")] = constraint(((g.get("template") or {}).get("metadata")) or {})
    return out


def pod_sets(rc, pod, placed):
    """[(set name, constraint)] of the recorded sets pod belongs to."""
    labels = pod["metadata"].get("labels") or {}
    head = labels.get("ray.io/node-type") == "head"
    gang = constraint(rc["metadata"])
    group = labels.get("ray.io/group")
    own = None if head else _group_constraints(rc).get(group)
    out = []
    if gang is not None and (not head or annotation(rc, INCLUDE_HEAD) == "true") and "gang" in placed:
        out.append(("gang", gang))
    if not head and own is not None and "group/%s" % group in placed:
        out.append(("group/%s" % group, own))
    replica = labels.get(REPLICA)
    if replica and "slice/%s" % replica in placed:
        out.append(("slice/%s" % replica, own or gang))
    return out


def annotation(obj, key):
    return (obj["metadata"].get("annotations") or {}).get(key)


def gang_domains(rc, nodes):
    """For the settled check: None when the RayCluster asks no topology-required node label; else the node-name sets
    (one per value of that label) its gang must fit within. The whole gang, head included, is placed in one set: a
    gang whose head could only fit outside it is not judged to fit (the check may miss it, never call it fitting
    wrongly). Preferred and Volcano's HyperNode constraints: [] (not judged)."""
    ann = rc["metadata"].get("annotations") or {}
    if ann.get(REQUIRED):
        out = {}
        for n in nodes:
            v = (n["metadata"].get("labels") or {}).get(ann[REQUIRED])
            if v is not None:
                out.setdefault(v, set()).add(n["metadata"]["name"])
        return list(out.values())
    return [] if constraint(rc["metadata"]) is not None else None


def violations(rcs, pods, nodes, hypernodes):
    """[(key, kind, message)] for the pods of admitted RayClusters (rcs: {uid: RayCluster}) outside their sets' domains."""
    node_labels = {n["metadata"]["name"]: n["metadata"].get("labels") or {} for n in nodes}
    members = None
    out = []
    for pod in pods:
        meta = pod["metadata"]
        node = pod["spec"].get("nodeName")
        if not node or node not in node_labels or meta.get("deletionTimestamp") or \
                (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        rc = next((rcs[o.get("uid")] for o in meta.get("ownerReferences") or [] if o.get("uid") in rcs), None)
        if rc is None or not annotation(rc, "raygate.io/admitted-at") or not annotation(rc, PLACED):
            continue
        try:
            placed = json.loads(annotation(rc, PLACED))
        except ValueError:
            out.append((("topology-record", rc["metadata"]["uid"]), "topology-split", "RayCluster %s/%s: %s is not JSON: %r" %
                        (rc["metadata"]["namespace"], rc["metadata"]["name"], PLACED, annotation(rc, PLACED))))
            continue
        for name, c in pod_sets(rc, pod, placed):
            domain = placed[name]
            if c == HYPERNODE:
                if members is None:
                    members = resolve_hypernodes(hypernodes, nodes)
                inside, where = node in members.get(domain, ()), "HyperNode %s" % domain
            else:
                inside, where = node_labels[node].get(c[1]) == domain, "%s=%s" % (c[1], domain)
            if not inside:
                out.append((("topology", meta["uid"], name), "topology-split",
                            "pod %s/%s of RayCluster %s is on node %s, outside its set %s's domain %s" %
                            (meta["namespace"], meta["name"], rc["metadata"]["name"], node, name, where)))
    return out


def self_test():
    """Fixtures: returns [(what, want kinds count, got)] of the cases that failed, and the number of cases."""
    def node(name, rack):
        return {"metadata": {"name": name, "labels": {"rack": rack, "kubernetes.io/hostname": name}}}

    def rc(uid, placed, ann=None, labels=None, groups=None):
        a = dict(ann or {}, **{"raygate.io/admitted-at": "2026-01-01T00:00:00Z", PLACED: json.dumps(placed)})
        return {"metadata": {"uid": uid, "name": uid, "namespace": "ns", "annotations": a, "labels": labels or {}},
                "spec": {"workerGroupSpecs": [{"groupName": g, "template": {"metadata": {"annotations": t}}}
                                              for g, t in (groups or {}).items()]}}

    def pod(name, owner, node_name, group=None, replica=None, deleting=False):
        labels = {"ray.io/node-type": "head"} if group is None else {"ray.io/node-type": "worker", "ray.io/group": group}
        if replica:
            labels[REPLICA] = replica
        meta = {"uid": name, "name": name, "namespace": "ns", "labels": labels, "ownerReferences": [{"uid": owner}]}
        if deleting:
            meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        return {"metadata": meta, "spec": {"nodeName": node_name}, "status": {"phase": "Running"}}

    nodes = [node("a1", "r1"), node("a2", "r1"), node("b1", "r2"), node("b2", "r2"), node("c1", "r3")]
    racks = {REQUIRED: "rack"}
    hns = [{"metadata": {"name": "hn-r1"}, "spec": {"tier": 1, "members": [
               {"type": "Node", "selector": {"exactMatch": {"name": "a1"}}},
               {"type": "Node", "selector": {"regexMatch": {"pattern": "^a2$"}}}]}},
           {"metadata": {"name": "hn-r2"}, "spec": {"tier": 1, "members": [
               {"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": "r2"}}}}]}},
           {"metadata": {"name": "spine"}, "spec": {"tier": 2, "members": [
               {"type": "HyperNode", "selector": {"regexMatch": {"pattern": "^hn-"}}}]}}]
    volcano = {VOLCANO_MODE: "hard", "volcano.sh/network-topology-highest-tier-allowed": "1"}
    slices = {"tpu": {REQUIRED: "rack"}}
    cases = [  # (what, RayCluster, pods, violations expected)
        ("a gang in one rack, its head elsewhere", rc("g", {"gang": "r1"}, racks),
         [pod("h", "g", "c1"), pod("w1", "g", "a1", "gpu"), pod("w2", "g", "a2", "gpu")], 0),
        ("a worker outside the rack", rc("g", {"gang": "r1"}, racks),
         [pod("h", "g", "a1"), pod("w1", "g", "a1", "gpu"), pod("w2", "g", "b1", "gpu")], 1),
        ("a head outside, included", rc("g", {"gang": "r1"}, dict(racks, **{INCLUDE_HEAD: "true"})),
         [pod("h", "g", "c1"), pod("w1", "g", "a1", "gpu")], 1),
        ("a terminating pod outside is not judged", rc("g", {"gang": "r1"}, racks),
         [pod("w1", "g", "a1", "gpu"), pod("w2", "g", "b1", "gpu", deleting=True)], 0),
        ("soft, spread: nothing recorded", rc("g", {"spread": True}, {PREFERRED: "rack"}),
         [pod("w1", "g", "a1", "gpu"), pod("w2", "g", "b1", "gpu")], 0),
        ("slices each in their rack", rc("s", {"slice/tpu-0": "r1", "slice/tpu-1": "r2"}, groups=slices),
         [pod("t1", "s", "a1", "tpu", "tpu-0"), pod("t2", "s", "a2", "tpu", "tpu-0"),
          pod("t3", "s", "b1", "tpu", "tpu-1"), pod("t4", "s", "b2", "tpu", "tpu-1")], 0),
        ("a slice split over racks", rc("s", {"slice/tpu-0": "r1", "slice/tpu-1": "r2"}, groups=slices),
         [pod("t1", "s", "a1", "tpu", "tpu-0"), pod("t2", "s", "b1", "tpu", "tpu-0"),
          pod("t3", "s", "b2", "tpu", "tpu-1")], 1),
        ("a group's own set", rc("o", {"group/gpu": "r2"}, groups={"gpu": {REQUIRED: "rack"}, "cpu": {}}),
         [pod("g1", "o", "b1", "gpu"), pod("g2", "o", "a1", "gpu"), pod("c", "o", "c1", "cpu")], 1),
        ("Volcano: within a tier-1 HyperNode (exact and regex members)", rc("v", {"gang": "hn-r1"}, labels=volcano),
         [pod("h", "v", "c1"), pod("w1", "v", "a1", "w"), pod("w2", "v", "a2", "w")], 0),
        ("Volcano: outside it", rc("v", {"gang": "hn-r1"}, labels=volcano),
         [pod("w1", "v", "a1", "w"), pod("w2", "v", "b2", "w")], 1),
        ("Volcano: a tier-2 HyperNode covers its children's nodes", rc("v", {"gang": "spine"}, labels=volcano),
         [pod("w1", "v", "a1", "w"), pod("w2", "v", "b2", "w"), pod("w3", "v", "c1", "w")], 1),
    ]
    failed = []
    for what, r, pods, want in cases:
        got = violations({r["metadata"]["uid"]: r}, pods, nodes, hns)
        if len(got) != want:
            failed.append((what, want, [m for _, _, m in got]))
    domains = [  # (what, RayCluster, the node sets of gang_domains, sorted; None: unconstrained)
        ("settled: required, one set per rack", rc("d", {}, racks), [["a1", "a2"], ["b1", "b2"], ["c1"]]),
        ("settled: unconstrained", rc("d", {}), None),
        ("settled: preferred is not judged", rc("d", {}, {PREFERRED: "rack"}), []),
        ("settled: Volcano's HyperNodes are not judged", rc("d", {}, labels=volcano), []),
    ]
    for what, r, want in domains:
        got = gang_domains(r, nodes)
        got = None if got is None else sorted(sorted(x) for x in got)
        if got != want:
            failed.append((what, want, got))
    return failed, len(cases) + len(domains)
