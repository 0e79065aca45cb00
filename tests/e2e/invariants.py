#!/usr/bin/env python3
"""raygate's invariant checker for the e2e fault drills.

Polls the apiserver (pods, RayClusters, Queues; one HTTPS connection, standard
library only) and reports every violation of what raygate promises, loudly on
stderr and one JSON line each in --violations:

  bound-unadmitted   a pod of a managed RayCluster is bound to a node while the
                     cluster has no raygate.io/admitted-at, or was scheduled
                     before that time (its PodScheduled condition is older),
                     unless it is a leftover of an eviction (below);
  ungated-unadmitted a live pod of a managed RayCluster lost our gate while the
                     cluster has no raygate.io/admitted-at, unless it is a
                     leftover of an eviction;
  admitted-twice     raygate.io/admitted-at of one RayCluster (uid) changed
                     without an eviction in between (raygate.io/requeue-count
                     grew, or raygate.io/evicted-at is not older than the
                     earlier admission);
  partly-evicted     an evicted gang (no admitted-at, raygate.io/evicted-at
                     set) keeps pods bound or ungated (its leftovers, which
                     raygate deletes) for longer than --evict-grace seconds
                     after the checker first saw them: a gang evicted in part;
  over-capability    the ungated, unfinished pods of a queue's subtree (a leaf:
                     its own; a parent: its descendants'; spec.parent, issue
                     23; their DRA claims counted as raygate counts them: a
                     template's per pod, a shared claim once, docs/dra.md)
                     request more of a resource than the queue's
                     capability lists (or the tree more than a Queue named
                     "root" lists);
  guarantee-lent     under a parent (or the root: the nodes' allocatable less
                     what pods outside any queue request), the children's
                     max(allocated, spec.guarantee.resource) sum to more than
                     the parent's capability: room guaranteed to one was lent
                     to another;
  partly-ungated     an admitted gang stays partly ungated longer than --grace
                     seconds: its live head, or fewer than the members of a
                     worker group (its minReplicas shape) that exist, gated
                     (a member replacing one that still terminates ungated
                     may wait for its room: raygate ungates it once that one
                     is gone);
  claim-stranded     an admitted gang has live, ungated pods that kube-scheduler
                     left unbound for want of devices (their PodScheduled
                     condition False, its message about claims or devices:
                     "cannot allocate all claims"; or a claim of a template
                     that kube-controller-manager did not make) while
                     other pods of it are bound, for longer than --grace seconds
                     (devices of Dynamic Resource Allocation that were
                     not counted; the gang is partly placed);
  partly-placed      an admitted gang has live, ungated pods that kube-scheduler
                     refused (PodScheduled False, reason Unschedulable: cpu,
                     a claim, a volume, whatever holds them back) while others
                     of it are bound and fewer than its members are, for
                     longer than --place-grace seconds (the gate's
                     --partial-placement-timeout, 30 s, takes it back whole);
  topology-split     a pod of an admitted topology-constrained gang is bound
                     outside the domain raygate.io/topology-placed records for
                     its set (invtopology.py).

With --settled it instead checks once, on a quiet cluster, that every gang
that fits is admitted (fault drill 7; a gang in its requeue backoff or
deactivated after evictions is not expected to be), and exits 3 naming those
that are not (any other failure of the check itself exits 1):

  fitting-gang-waits a complete gang that is not admitted, in a leaf queue of a
                     good tree, fits its queue's and every ancestor's free
                     capability without taking a guarantee of another
                     subtree, and the nodes (first fit, larger pods first),
                     and is not behind a fifo queue's head gang that does not
                     fit; or an admitted gang's first gated tail pod fits.

--self-test runs the tree, claim-stranded and topology checks on fixtures (no cluster) and exits.

Pods are listed before RayClusters, so an annotation written before a pod was
ungated (what raygate does) is always seen. Pods whose RayCluster (by owner
uid) is gone are not judged. A managed RayCluster is one labelled
volcano.sh/queue-name. --status gets {"polls", "errors", "violations", "t"}
after every poll, so the caller can tell that the checker ran.
"""
import argparse
import http.client
import json
import os
import re
import signal
import ssl
import sys
import time
from datetime import datetime, timezone
from fractions import Fraction

import invtopology
from invtree import ROOT_NAME, Tree, add, fmt, quantity, spec_resources

GATE = "raygate.io/gang"
ADMITTED = "raygate.io/admitted-at"
HELD = "raygate.io/held-suspended"
EVICTED = "raygate.io/evicted-at"
REQUEUES = "raygate.io/requeue-count"
QUEUE_LABEL = "volcano.sh/queue-name"

def container_request(c):
    r = c.get("resources") or {}
    out = {k: quantity(v) for k, v in (r.get("limits") or {}).items()}
    out.update({k: quantity(v) for k, v in (r.get("requests") or {}).items()})
    return out


DRA_API = "/apis/resource.k8s.io/v1"


def class_resource(cls):
    """The queue resource a DeviceClass's devices count as (lib/dra/deviceclass.h)."""
    name = cls["metadata"]["name"]
    ann = cls["metadata"].get("annotations") or {}
    return (cls.get("spec") or {}).get("extendedResourceName") or ann.get("raygate.io/quota-resource") or \
        "deviceclass.resource.kubernetes.io/" + name


def claim_devices(spec, classes):
    """{resource: count} of a claim spec's exactly requests (firstAvailable: its first), as raygate counts them."""
    out = {}
    for r in ((spec or {}).get("devices") or {}).get("requests") or []:
        req = r.get("exactly") or ((r.get("firstAvailable") or [None])[0]) or {}
        cls = classes.get(req.get("deviceClassName"))
        if cls is not None and req.get("allocationMode", "ExactCount") == "ExactCount":
            add(out, {cls: req.get("count", 1)})
    return out


def pod_devices(pod, dra, shared_seen):
    """The devices a pod's claims count as in its queue: its templates', and each shared claim once (shared_seen)."""
    classes, templates, claims = dra
    out = {}
    ns = pod["metadata"]["namespace"]
    for c in pod["spec"].get("resourceClaims") or []:
        if c.get("resourceClaimTemplateName"):
            t = templates.get((ns, c["resourceClaimTemplateName"]))
            if t is not None:
                add(out, claim_devices((t.get("spec") or {}).get("spec"), classes))
        elif c.get("resourceClaimName") and (ns, c["resourceClaimName"]) not in shared_seen:
            shared_seen.add((ns, c["resourceClaimName"]))
            cl = claims.get((ns, c["resourceClaimName"]))
            if cl is not None:
                add(out, claim_devices(cl.get("spec"), classes))
    return out


def pod_request(spec):
    """kube-scheduler's effective request (sidecars, init containers, overhead)."""
    total, sidecars, init = {}, {}, {}
    for c in spec.get("containers") or []:
        add(total, container_request(c))
    for c in spec.get("initContainers") or []:
        req = container_request(c)
        if c.get("restartPolicy") == "Always":
            add(total, req)
            add(sidecars, req)
            cand = dict(sidecars)
        else:
            cand = dict(req)
            add(cand, sidecars)
        for k, v in cand.items():
            init[k] = max(init.get(k, 0), v)
    for k, v in init.items():
        total[k] = max(total.get(k, 0), v)
    add(total, {k: quantity(v) for k, v in (spec.get("overhead") or {}).items()})
    return total


def legacy_shape(rc):
    """{pod type: workers counted in minMember} of a legacy cluster.ray.io RayCluster (legacy.h's arithmetic)."""
    spec = rc.get("spec") or {}
    left = spec.get("maxWorkers", 2**63 - 1)
    shape = {}
    for t in spec.get("podTypes") or []:
        n = min(t.get("minWorkers") or 0, t.get("maxWorkers", 2**63 - 1), left)
        left -= n
        shape[t.get("name")] = n
    return shape


def held_waiting(rc):
    """A RayCluster the webhook holds suspended (--hold-gangs, heldsuspend.h), not admitted yet: KubeRay made no pod."""
    ann = rc["metadata"].get("annotations") or {}
    return ann.get(HELD) == "true" and not ann.get(ADMITTED) and (rc.get("spec") or {}).get("suspend") is True


def declared_members(rc):
    """The requests of a held RayCluster's members from its templates: its head and each group's counted pods."""
    spec = rc.get("spec") or {}
    out = [pod_request(((spec.get("headGroupSpec") or {}).get("template") or {}).get("spec") or {})]
    shape = group_shape(rc)
    for g in spec.get("workerGroupSpecs") or []:
        req = pod_request((g.get("template") or {}).get("spec") or {})
        out += [req] * shape.get(g.get("groupName"), 0)
    return out


def rc_priority(rc):
    """What priority() of its pods would be: none of a held RayCluster's pods exist, so 0 (the default class)."""
    return 0


def group_shape(rc):
    """{groupName: pods counted in minMember} (gang.h's arithmetic)."""
    if rc.get("apiVersion", "").startswith("cluster.ray.io/"):
        return legacy_shape(rc)
    spec = rc.get("spec") or {}
    autoscaling = spec.get("enableInTreeAutoscaling") is True
    shape = {}
    for g in spec.get("workerGroupSpecs") or []:
        mn = g.get("minReplicas") or 0
        mx = g.get("maxReplicas")
        mx = 2**31 - 1 if mx is None else mx
        r = g.get("replicas")
        r = mn if r is None else r
        if g.get("suspend") is True:
            r = 0
        elif autoscaling:
            r = mn
        elif mn > mx:
            r = mx
        else:
            r = min(max(r, mn), mx)
        shape[g.get("groupName")] = r * (g.get("numOfHosts") or 1)
    return shape


def ts(s):
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc) if s else None


def gated(pod):
    return any(g.get("name") == GATE for g in (pod["spec"].get("schedulingGates") or []))


def pod_story(pod, rc):
    """A pod counted against a queue, for a violation's message: its requests, node, and its RayCluster's state."""
    meta = pod["metadata"]
    parts = ["%s=%s" % (k, fmt(v)) for k, v in sorted(pod_request(pod["spec"]).items())]
    parts.append("node=%s" % (pod["spec"].get("nodeName") or "-"))
    if meta.get("deletionTimestamp"):
        parts.append("terminating")
    if rc is None:
        parts.append("rc=gone")
    else:
        parts.append("rc=%s" % ("admitted " + annotation(rc, ADMITTED) if annotation(rc, ADMITTED) else "not-admitted"))
        if rc["metadata"].get("deletionTimestamp"):
            parts.append("rc-deleting")
    return "%s(%s)" % (meta["name"], ",".join(parts))


def finished(pod):
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def live(pod):
    return not finished(pod) and not pod["metadata"].get("deletionTimestamp")


def owner_uid(pod):
    for o in pod["metadata"].get("ownerReferences") or []:
        if o.get("kind") == "RayCluster":
            return o.get("uid")
    return None


def scheduled_at(pod):
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "True":
            return ts(c.get("lastTransitionTime"))
    return None


def eviction_leftover(pod, rc):
    """Whether a bound pod is a leftover of an eviction of rc being deleted: terminating, and scheduled before the
    eviction record (raygate.io/evicted-at) that rc keeps after it is admitted again. A gang requeued at once (a
    preemption's victim readmitted with its minimum) is admitted anew while such pods still terminate: they were
    bound under the earlier admission, and partly-evicted judges how long they stay."""
    ev = ts(annotation(rc, EVICTED))
    at = scheduled_at(pod)
    return bool(pod["metadata"].get("deletionTimestamp")) and ev is not None and at is not None and at <= ev


def annotation(obj, key):
    return (obj["metadata"].get("annotations") or {}).get(key)


def evicted(rc):
    """The RayCluster's eviction time when it is not admitted and has an eviction record, else None."""
    return ts(annotation(rc, EVICTED)) if not annotation(rc, ADMITTED) else None


def held_back(rc):
    """Whether an evicted RayCluster may not be admitted now: its backoff runs, or it is deactivated (same generation)."""
    if evicted(rc) is None or annotation(rc, "raygate.io/evicted-generation") != str(rc["metadata"].get("generation")):
        return False
    at = ts(annotation(rc, "raygate.io/requeue-at"))
    return at is None or at > datetime.now(timezone.utc)


# DRA's words, not a volume's: a PersistentVolumeClaim that holds a pod back is raygate's eviction's to judge
# (placement timeout), as cpu is, and the eviction tests build such gangs on purpose.
CLAIM_WAIT = re.compile(r"allocate all claims|resource ?claim|device", re.IGNORECASE)


def claim_wait(pod):
    """The message of the pod's PodScheduled=False condition when it is about claims or devices, else None."""
    if pod["spec"].get("nodeName"):
        return None
    status = pod.get("status") or {}
    for c in status.get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False" and CLAIM_WAIT.search(c.get("message") or ""):
            return c.get("message")
    # A claim from a template that kube-controller-manager has not made (the template is missing: seen on 1.37.2,
    # the pod then has no PodScheduled condition at all, kube-scheduler does not try it).
    made = {s.get("name") for s in status.get("resourceClaimStatuses") or []}
    for rc in pod["spec"].get("resourceClaims") or []:
        if rc.get("resourceClaimTemplateName") and rc.get("name") not in made:
            return "no ResourceClaim made for %s (template %s)" % (rc.get("name"), rc.get("resourceClaimTemplateName"))
    return None


def refused(pod):
    """Whether kube-scheduler tried the unbound pod and found no node for it (PodScheduled False, reason Unschedulable)."""
    return not pod["spec"].get("nodeName") and any(
        c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("reason") == "Unschedulable"
        for c in (pod.get("status") or {}).get("conditions") or [])


def partly_refused(rc, pods):
    """[names] of an admitted gang's live, ungated pods kube-scheduler refused while others of it are bound and fewer than
    its members are (a refused tail beside all members bound is not a partly placed gang); [] otherwise."""
    mine = [p for p in pods if live(p)]
    nbound = sum(1 for p in mine if p["spec"].get("nodeName"))
    if nbound == 0 or nbound >= 1 + sum(group_shape(rc).values()):
        return []
    return [p["metadata"]["name"] for p in mine if not gated(p) and refused(p)]


def stranded(pods):
    """[(name, message)] of a gang's live, ungated pods waiting unbound on claims or devices while another of its
    live pods is bound; [] when none is bound or none waits so (a gang waiting whole is not partly placed)."""
    mine = [p for p in pods if live(p)]
    if not any(p["spec"].get("nodeName") for p in mine):
        return []
    return [(p["metadata"]["name"], claim_wait(p)) for p in mine if not gated(p) and claim_wait(p)]


def priority(pods):
    return max([p["spec"].get("priority") or 0 for p in pods] or [0])


def min_resources(rc):
    raw = (rc["metadata"].get("annotations") or {}).get("raygate.io/min-resources")
    return {k: quantity(v) for k, v in json.loads(raw).items()} if raw else None


def fits(need, free):
    return all(v <= free.get(k, v) for k, v in need.items() if v > 0)


def overdue(since, uid, found, grace, now):
    """Whether what was found of uid (nothing: it ends, since forgets it) has lasted over grace seconds since first seen."""
    if not found:
        since.pop(uid, None)
        return False
    return now - since.setdefault(uid, now) > grace


def charge(free, req):
    """A pod of request req placed on a node whose free room is free (changed in place)."""
    for k, v in req.items():
        if k in free:
            free[k] -= v
    if "pods" in free:
        free["pods"] -= 1


def reserve_admitted(rcs, by_owner, nodes):
    """The room the gate holds for admitted pods not bound yet (fithold.h): each live, ungated, unbound pod of an
    admitted RayCluster is charged to the first node it fits, else to the node with the most free cpu (which may go
    below zero, as the gate's reservation of a pod held short does). nodes: [[name, free]], changed in place."""
    n = 0
    for rc in rcs:
        if not (rc["metadata"].get("annotations") or {}).get(ADMITTED):
            continue
        for p in by_owner.get(rc["metadata"]["uid"], []):
            if not live(p) or gated(p) or p["spec"].get("nodeName") or not nodes:
                continue
            req = pod_request(p["spec"])
            fit = [free for _, free in nodes if fits(req, free) and free.get("pods", 1) >= 1]
            charge(fit[0] if fit else max((f for _, f in nodes), key=lambda f: f.get("cpu", 0)), req)
            n += 1
    if n:
        print("settled: %d pods of admitted gangs not bound hold room on the nodes" % n, file=sys.stderr, flush=True)


def place(pods, nodes):
    """First fit, larger pods first (cpu, then memory), over nodes sorted by name; nodes: [[name, free]]."""
    trial = [[n, dict(f)] for n, f in nodes]
    for req in sorted(pods, key=lambda r: (-r.get("cpu", 0), -r.get("memory", 0))):
        for _, free in trial:
            if fits(req, free) and free.get("pods", 1) >= 1:
                charge(free, req)
                break
        else:
            return False
    return True


class Api:
    def __init__(self, server, token, ca):
        m = re.match(r"https://([^:/]+):(\d+)", server)
        self.host, self.port = m.group(1), int(m.group(2))
        self.token = token
        self.ctx = ssl.create_default_context(cafile=ca)
        self.conn = None

    def get(self, path, missing_ok=False):
        """The decoded body of GET path; None for a 404 when missing_ok (a CRD that is not installed)."""
        for attempt in range(2):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=10)
                self.conn.request("GET", path, headers={"Authorization": "Bearer " + self.token, "Accept": "application/json"})
                r = self.conn.getresponse()
                body = r.read()
                if r.status == 404 and missing_ok:
                    return None
                if r.status != 200:
                    raise IOError("GET %s: HTTP %d" % (path, r.status))
                return json.loads(body)
            except (OSError, http.client.HTTPException, ValueError):
                if self.conn is not None:
                    self.conn.close()
                self.conn = None
                if attempt == 1:
                    raise
        return None


class Checker:
    def __init__(self, args):
        self.args = args
        self.api = Api(args.server, open(args.token).read().strip(), args.ca)
        self.reported = set()
        self.admitted_at = {}  # RayCluster uid -> (admitted-at, requeue-count) last seen
        self.leftover_since = {}  # RayCluster uid -> monotonic time its eviction leftovers were first seen
        self.partial_since = {}  # RayCluster uid -> monotonic time first seen partly ungated
        self.refused_since = {}  # RayCluster uid -> monotonic time first seen partly placed with a member refused
        self.stranded_since = {}  # RayCluster uid -> monotonic time first seen with pods waiting on claims beside bound ones
        self.polls = self.errors = self.violations = 0

    def violate(self, key, kind, message):
        if key in self.reported:
            return
        self.reported.add(key)
        self.violations += 1
        line = json.dumps({"t": datetime.now(timezone.utc).isoformat(), "kind": kind, "message": message})
        print("INVARIANT VIOLATED [%s]: %s" % (kind, message), file=sys.stderr, flush=True)
        with open(self.args.violations, "a") as f:
            f.write(line + "\n")

    def lists(self):
        sel = "labelSelector=ray.io%2Fcluster%2Cvolcano.sh%2Fqueue-name"
        if self.args.namespace:
            ns = "/namespaces/" + self.args.namespace
        else:
            ns = ""
        # Every pod list comes before every RayCluster list (see the docstring):
        # a legacy head ungated between the two reads must be seen with the
        # admitted-at written before it, never the other way round.
        pods = self.api.get("/api/v1%s/pods?%s" % (ns, sel))["items"]
        # The legacy operator's pods (ray-cluster-name); a 404 cannot happen
        # for pods, so list them whether or not the legacy CRD is installed.
        pods += self.api.get("/api/v1%s/pods?labelSelector=ray-cluster-name%%2Cvolcano.sh%%2Fqueue-name" % ns)["items"]
        rcs = self.api.get("/apis/ray.io/v1%s/rayclusters" % ns)["items"]
        legacy = self.api.get("/apis/cluster.ray.io/v1%s/rayclusters" % ns, missing_ok=True)
        if legacy is not None:
            rcs += [dict(rc, apiVersion="cluster.ray.io/v1") for rc in legacy["items"]]
        queues = self.api.get("/apis/scheduling.volcano.sh/v1beta1/queues")["items"]
        nodes = self.api.get("/api/v1/nodes")["items"]
        hypernodes = self.api.get("/apis/topology.volcano.sh/v1alpha1/hypernodes", missing_ok=True)
        return pods, rcs, queues, nodes, (hypernodes or {}).get("items") or [], self.dra_lists()

    def dra_lists(self):
        """(class -> queue resource, (ns, template) -> template, (ns, claim) -> claim), empty where DRA is not served."""
        got = [self.api.get(DRA_API + "/" + r, missing_ok=True) for r in ("deviceclasses", "resourceclaimtemplates", "resourceclaims")]
        items = [(g or {}).get("items") or [] for g in got]
        key = lambda o: (o["metadata"].get("namespace"), o["metadata"]["name"])
        return ({c["metadata"]["name"]: class_resource(c) for c in items[0]}, {key(t): t for t in items[1]},
                {key(c): c for c in items[2]})

    def check(self, pods, rcs, queues, nodes=(), hypernodes=(), dra=({}, {}, {})):
        now = time.monotonic()
        by_uid = {}
        for rc in rcs:
            meta = rc["metadata"]
            if not (meta.get("labels") or {}).get(QUEUE_LABEL):
                continue
            by_uid[meta["uid"]] = rc
            at = annotation(rc, ADMITTED)
            if at:
                count = annotation(rc, REQUEUES) or "0"
                first, first_count = self.admitted_at.setdefault(meta["uid"], (at, count))
                ev = ts(annotation(rc, EVICTED))
                requeued = count != first_count or (ev is not None and ev >= ts(first))
                if first != at and not requeued:
                    self.violate(("twice", meta["uid"]), "admitted-twice", "RayCluster %s/%s admitted at %s, then again at %s" %
                                 (meta["namespace"], meta["name"], first, at))
                self.admitted_at[meta["uid"]] = (at, count)

        per_rc = {}
        leftovers = {}  # RayCluster uid -> names of its pods still bound or ungated after an eviction
        held = {}  # queue -> {resource: amount}
        who = {}  # queue -> the pods counted in held
        shared_seen = set()  # shared claims counted (once) in held
        for pod in pods:
            meta = pod["metadata"]
            name = "%s/%s" % (meta["namespace"], meta["name"])
            ungated = not gated(pod)
            if ungated and not finished(pod):
                add(held.setdefault(meta["labels"][QUEUE_LABEL], {}), pod_request(pod["spec"]))
                add(held[meta["labels"][QUEUE_LABEL]], pod_devices(pod, dra, shared_seen))
                who.setdefault(meta["labels"][QUEUE_LABEL], []).append(pod_story(pod, by_uid.get(owner_uid(pod))))
            rc = by_uid.get(owner_uid(pod))
            if rc is None:
                continue
            per_rc.setdefault(rc["metadata"]["uid"], []).append(pod)
            at = ts((rc["metadata"].get("annotations") or {}).get(ADMITTED))
            node = pod["spec"].get("nodeName")
            if (at is None and evicted(rc) is not None and (node or ungated)) or (node and eviction_leftover(pod, rc)):
                leftovers.setdefault(rc["metadata"]["uid"], []).append(meta["name"])
                continue  # a leftover of an eviction: judged by partly-evicted below
            if node and at is None:
                self.violate(("bound", meta["uid"]), "bound-unadmitted",
                             "pod %s is bound to %s but RayCluster %s has no %s" % (name, node, rc["metadata"]["name"], ADMITTED))
            elif node and scheduled_at(pod) is not None and scheduled_at(pod) < at:
                self.violate(("bound", meta["uid"]), "bound-unadmitted", "pod %s was scheduled at %s, before its RayCluster's %s %s" %
                             (name, scheduled_at(pod).isoformat(), ADMITTED, at.isoformat()))
            if ungated and live(pod) and at is None:
                self.violate(("ungated", meta["uid"]), "ungated-unadmitted",
                             "pod %s has no %s gate but RayCluster %s has no %s" % (name, GATE, rc["metadata"]["name"], ADMITTED))

        for key, kind, message in invtopology.violations(by_uid, pods, nodes, hypernodes):
            self.violate(key, kind, message)

        tree = Tree(queues)
        if any(tree.guarantee[k] for k in tree.children.get(None, [])):
            tree.total = self.root_total()
        for key, kind, message in tree.violations(held):
            # a queue's level: the pods of its subtree; the root's: every pod counted
            pods_of = [p for q in sorted(who) if key[1] is None or key[1] in tree.chain(q) for p in who[q]]
            self.violate(key, kind, message + (": " + " ".join(pods_of) if pods_of else ""))

        for uid in list(self.leftover_since):
            if uid not in leftovers:
                del self.leftover_since[uid]
        for uid, names in leftovers.items():
            rc = by_uid[uid]
            since = self.leftover_since.setdefault(uid, now)
            if now - since > self.args.evict_grace:
                self.violate(("evicted", uid, evicted(rc)), "partly-evicted",
                             "evicted RayCluster %s/%s still has %d pods bound or ungated %ss after they were first seen (%s)" %
                             (rc["metadata"]["namespace"], rc["metadata"]["name"], len(names), self.args.evict_grace,
                              ", ".join(sorted(names)[:5])))

        self.check_refused(by_uid, per_rc, now)
        for uid, rc in by_uid.items():
            waits = stranded(per_rc.get(uid, [])) if annotation(rc, ADMITTED) else []
            if overdue(self.stranded_since, uid, waits, self.args.grace, now):
                self.violate(("stranded", uid, annotation(rc, ADMITTED)), "claim-stranded",
                             "admitted RayCluster %s/%s partly placed for over %ss: %d pods bound, %d wait on claims (%s)" %
                             (rc["metadata"]["namespace"], rc["metadata"]["name"], self.args.grace,
                              sum(1 for p in per_rc.get(uid, []) if live(p) and p["spec"].get("nodeName")), len(waits),
                              "; ".join("%s: %s" % w for w in sorted(waits)[:3])))

        for uid, rc in by_uid.items():
            if not (rc["metadata"].get("annotations") or {}).get(ADMITTED):
                self.partial_since.pop(uid, None)
                continue
            shape = group_shape(rc)
            short = []
            roles = {}
            for pod in per_rc.get(uid, []):
                leaving = not live(pod) and not finished(pod) and not gated(pod)
                if not live(pod) and not leaving:
                    continue
                labels = pod["metadata"].get("labels") or {}
                if "ray-cluster-name" in labels and "ray.io/cluster" not in labels:  # the legacy operator's pod
                    role = "head" if labels.get("ray-node-type") == "head" else labels.get("ray-user-node-type")
                else:
                    role = "head" if labels.get("ray.io/node-type") == "head" else labels.get("ray.io/group")
                n = roles.setdefault(role, [0, 0, 0])
                if leaving:  # terminating and ungated: a member being replaced, whose room its replacement waits for
                    n[2] += 1
                    continue
                n[0] += 1
                n[1] += 0 if gated(pod) else 1
            for role, (exist, ungated, leaving) in roles.items():
                need = 1 if role == "head" else shape.get(role, 0)
                if ungated + leaving < min(need, exist):
                    short.append("%s: %d of %d members ungated" % (role, ungated, min(need, exist)))
            if not short:
                self.partial_since.pop(uid, None)
                continue
            since = self.partial_since.setdefault(uid, now)
            if now - since > self.args.grace:
                self.violate(("partial", uid), "partly-ungated", "admitted RayCluster %s/%s partly ungated for over %ss (%s)" %
                             (rc["metadata"]["namespace"], rc["metadata"]["name"], self.args.grace, "; ".join(short)))

    def root_total(self, pods=None, nodes=None):
        """The room the root shares: every node's allocatable less what bound, unfinished pods outside any queue
        request (all nodes, cordoned or not: the checker may see more room than the gate, never less)."""
        total = {}
        for n in nodes if nodes is not None else self.api.get("/api/v1/nodes")["items"]:
            add(total, {k: quantity(v) for k, v in n["status"].get("allocatable", {}).items()})
        for p in pods if pods is not None else self.api.get("/api/v1/pods")["items"]:
            if p["spec"].get("nodeName") and not finished(p) and QUEUE_LABEL not in (p["metadata"].get("labels") or {}):
                add(total, pod_request(p["spec"]), -1)
        return total

    def gate_says(self, ns, name):
        """Why the gate says RayCluster ns/name waits: its PodGroup's Unschedulable message, or '?'."""
        try:
            pg = self.api.get("/apis/scheduling.volcano.sh/v1beta1/namespaces/%s/podgroups/ray-%s-pg" % (ns, name), missing_ok=True)
        except (OSError, http.client.HTTPException, ValueError) as e:
            return "? (%s)" % e
        for c in ((pg or {}).get("status") or {}).get("conditions") or []:
            if c.get("type") == "Unschedulable":
                return c.get("message") or "?"
        return "?"

    def settled(self):
        """One check on a quiet cluster: every gang that fits is admitted. Returns the number of findings."""
        pods = self.api.get("/api/v1/pods")["items"]
        rcs = self.api.get("/apis/ray.io/v1%s/rayclusters" % ("/namespaces/" + self.args.namespace if self.args.namespace else ""))["items"]
        queues = {q["metadata"]["name"]: q for q in self.api.get("/apis/scheduling.volcano.sh/v1beta1/queues")["items"]}
        nodes = []
        all_nodes = self.api.get("/api/v1/nodes")["items"]
        for n in sorted(all_nodes, key=lambda n: n["metadata"]["name"]):
            ready = any(c["type"] == "Ready" and c["status"] == "True" for c in n["status"].get("conditions") or [])
            if ready and not n["spec"].get("unschedulable"):
                nodes.append([n["metadata"]["name"], {k: quantity(v) for k, v in n["status"]["allocatable"].items()}])
        free_node = dict((name, free) for name, free in nodes)
        for p in pods:
            node = p["spec"].get("nodeName")
            if node in free_node and not finished(p):
                charge(free_node[node], pod_request(p["spec"]))
        by_owner = {}
        for p in pods:
            by_owner.setdefault(owner_uid(p), []).append(p)
        reserve_admitted(rcs, by_owner, nodes)
        held, waiting, tails = {}, {}, {}
        by_name = {(rc["metadata"]["namespace"], rc["metadata"]["name"]): rc for rc in rcs}
        findings = 0
        for rc in rcs:
            meta = rc["metadata"]
            q = (meta.get("labels") or {}).get(QUEUE_LABEL)
            if not q:
                continue
            mine = [p for p in by_owner.get(meta["uid"], []) if not finished(p)]
            ungated = {}
            for p in mine:
                if not gated(p):
                    add(ungated, pod_request(p["spec"]))
            minres = min_resources(rc) or {}
            if (meta.get("annotations") or {}).get(ADMITTED):
                h = held.setdefault(q, {})
                for k in set(minres) | set(ungated):
                    h[k] = h.get(k, 0) + max(minres.get(k, 0), ungated.get(k, 0))
                gated_tail = sorted([p for p in mine if gated(p) and live(p)],
                                    key=lambda p: (p["metadata"]["creationTimestamp"], p["metadata"]["name"]))
                if gated_tail:
                    tails.setdefault(q, []).append((rc, gated_tail[0]))
                continue
            add(held.setdefault(q, {}), ungated)
            if held_back(rc):
                continue  # in its requeue backoff, or deactivated: not to be admitted now
            if held_waiting(rc):  # --hold-gangs: no pod until admitted; its members are its templates'
                waiting.setdefault(q, []).append((-rc_priority(rc), meta["creationTimestamp"], meta["namespace"], meta["name"],
                                                   minres, declared_members(rc)))
                continue
            live_pods = [p for p in mine if live(p)]
            shape = group_shape(rc)
            roles = {}
            for p in live_pods:
                labels = p["metadata"].get("labels") or {}
                if "ray-cluster-name" in labels and "ray.io/cluster" not in labels:  # the legacy operator's pod
                    role = "head" if labels.get("ray-node-type") == "head" else labels.get("ray-user-node-type")
                else:
                    role = "head" if labels.get("ray.io/node-type") == "head" else labels.get("ray.io/group")
                roles.setdefault(role, []).append(p)
            need = dict(shape, head=1)
            if any(len(roles.get(r, [])) < n for r, n in need.items()):
                continue  # incomplete: waits for its pods
            members = []
            for r, n in need.items():
                members += sorted(roles.get(r, []), key=lambda p: (p["metadata"]["creationTimestamp"], p["metadata"]["name"]))[:n]
            waiting.setdefault(q, []).append((-priority(live_pods), meta["creationTimestamp"], meta["namespace"], meta["name"],
                                               minres, [pod_request(p["spec"]) for p in members]))
        node_list = [[n, free_node[n]] for n, _ in nodes]
        tree = Tree(queues.values(), self.root_total(pods, all_nodes))
        alloc = tree.alloc(held)
        for q, gangs in waiting.items():
            queue = queues.get(q)
            if queue is None or (queue.get("status") or {}).get("state") in ("Closed", "Closing") or not tree.is_leaf(q):
                continue  # closed, a parent or in a bad tree: its gangs wait
            cap = {k: quantity(v) for k, v in ((queue.get("spec") or {}).get("capability") or {}).items()}
            free = {k: v - held.get(q, {}).get(k, 0) for k, v in cap.items()}
            fifo = (queue.get("spec") or {}).get("dequeueStrategy") == "fifo"
            for _, created, ns, name, minres, members in sorted(gangs):
                sets = invtopology.gang_domains(by_name[(ns, name)], all_nodes)  # a topology gang: within one domain
                ok = tree.fits(q, minres, alloc) and (place(members, node_list) if sets is None else
                                                      any(place(members, [x for x in node_list if x[0] in s]) for s in sets))
                if ok:
                    findings += 1
                    print("SETTLED CHECK FAILED [fitting-gang-waits]: RayCluster %s/%s (queue %s%s) fits (needs %s; free %s) but is not admitted; "
                          "the gate says: %s" % (ns, name, q, ", fifo" if fifo else "", {k: fmt(v) for k, v in minres.items()},
                                                 {k: fmt(v) for k, v in free.items()}, self.gate_says(ns, name)), file=sys.stderr, flush=True)
                if fifo:
                    break  # the head gang: those behind it wait for it, fitting or not
        for q, items in tails.items():
            for rc, pod in items:
                req = pod_request(pod["spec"])
                if tree.fits(q, req, alloc) and place([req], node_list):
                    findings += 1
                    print("SETTLED CHECK FAILED [fitting-gang-waits]: tail pod %s of admitted RayCluster %s fits queue %s but is gated" %
                          (pod["metadata"]["name"], rc["metadata"]["name"], q), file=sys.stderr, flush=True)
        n_admitted = sum(1 for rc in rcs if (rc["metadata"].get("annotations") or {}).get(ADMITTED))
        print("settled: %d RayClusters, %d admitted, %d complete and waiting, %d findings" %
              (len(rcs), n_admitted, sum(len(g) for g in waiting.values()), findings), file=sys.stderr, flush=True)
        return findings

    def check_refused(self, by_uid, per_rc, now):
        """partly-placed: an admitted gang partly bound, a member refused by kube-scheduler, past --place-grace."""
        for uid, rc in by_uid.items():
            names = partly_refused(rc, per_rc.get(uid, [])) if annotation(rc, ADMITTED) else []
            if overdue(self.refused_since, uid, names, self.args.place_grace, now):
                self.violate(("refused", uid, annotation(rc, ADMITTED)), "partly-placed",
                             "admitted RayCluster %s/%s partly placed for over %ss: kube-scheduler refused %s" %
                             (rc["metadata"]["namespace"], rc["metadata"]["name"], self.args.place_grace,
                              ", ".join(sorted(names)[:5])))

    def status(self):
        with open(self.args.status + ".tmp", "w") as f:
            json.dump({"polls": self.polls, "errors": self.errors, "violations": self.violations, "t": time.time()}, f)
        os.replace(self.args.status + ".tmp", self.args.status)

    def run(self):
        stop = []
        signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
        deadline = time.monotonic() + self.args.duration if self.args.duration else None
        while not stop and (deadline is None or time.monotonic() < deadline):
            t0 = time.monotonic()
            try:
                self.check(*self.lists())
                self.polls += 1
            except (OSError, http.client.HTTPException, ValueError, KeyError, TypeError) as e:
                self.errors += 1
                if self.errors % 20 == 1:
                    print("invariants: poll failed (%s); the apiserver may be restarting" % e, file=sys.stderr, flush=True)
            self.status()
            time.sleep(max(0.0, self.args.interval - (time.monotonic() - t0)))
        return 1 if self.violations else 0


def self_test():
    """The tree checks on fixtures: returns the number of failures (printed)."""
    def q(name, parent=None, cap=None, guarantee=None):
        spec = {"capability": cap or {}}
        if parent:
            spec["parent"] = parent
        if guarantee:
            spec["guarantee"] = {"resource": guarantee}
        return {"metadata": {"name": name}, "spec": spec}

    def cpu(v):
        return {"cpu": Fraction(v)}

    eng = [q("eng", cap={"cpu": "16"}), q("train", "eng"), q("infer", "eng"), q("research", cap={"cpu": "8"})]
    guaranteed = [q("eng", cap={"cpu": "16"}), q("train", "eng", cap={"cpu": "32"}), q("infer", "eng", guarantee={"cpu": "4"})]
    cycle = [q("a", "b"), q("b", "a"), q("d", "b"), q("c", cap={"cpu": "2"}), q("x", "missing")]
    top = [q("p", cap={"cpu": "8"}), q("g", guarantee={"cpu": "2"}), q("root", cap={"cpu": "9"})]
    cases = [  # (what, tree, held, expected violation kinds and queues)
        ("within every capability", Tree(eng), {"train": cpu(12), "infer": cpu(4), "research": cpu(8)}, []),
        ("a parent over its capability", Tree(eng), {"train": cpu(14), "infer": cpu(4)}, [("over-capability", "eng")]),
        ("a leaf over its own", Tree(eng), {"research": cpu(9)}, [("over-capability", "research")]),
        ("a guarantee kept", Tree(guaranteed), {"train": cpu(12)}, []),
        ("a guarantee lent", Tree(guaranteed), {"train": cpu(13)}, [("guarantee-lent", "eng")]),
        ("a guarantee used by its own", Tree(guaranteed), {"train": cpu(10), "infer": cpu(6)}, []),
        ("a bad tree: own capability only", Tree(cycle), {"a": cpu(5), "d": cpu(5), "c": cpu(3)}, [("over-capability", "c")]),
        ("the root's guarantee, total known", Tree(top, cpu(8)), {"p": cpu(7)}, [("guarantee-lent", None)]),
        ("the root's guarantee kept", Tree(top, cpu(8)), {"p": cpu(6), "g": cpu(1)}, []),
        ("a Queue named root caps the tree (and lends g's guarantee)", Tree(top), {"p": cpu(8), "g": cpu(2)},
         [("over-capability", "root"), ("guarantee-lent", None)]),
    ]
    failures = 0
    for what, tree, held, want in cases:
        got = sorted((kind, key[1]) for key, kind, _ in tree.violations(held))
        if got != sorted(want, key=str):
            failures += 1
            print("self-test FAILED: %s: want %s, got %s" % (what, want, got), file=sys.stderr)
    fits_cases = [  # (what, tree, held, leaf, need, expected)
        ("train borrows up to eng's 16", Tree(eng), {"train": cpu(12)}, "train", cpu(4), True),
        ("not beyond", Tree(eng), {"train": cpu(12), "infer": cpu(2)}, "train", cpu(4), False),
        ("a child's capability above its parent's is the parent's", Tree(guaranteed), {}, "train", cpu(17), False),
        ("infer's idle guarantee is not lent", Tree(guaranteed), {"train": cpu(12)}, "train", cpu(1), False),
        ("infer uses its guarantee", Tree(guaranteed), {"train": cpu(12)}, "infer", cpu(4), True),
        ("a parent holds no gangs", Tree(eng), {}, "eng", cpu(1), False),
        ("a queue in a cycle holds none", Tree(cycle), {}, "a", cpu(1), False),
        ("nor one under it", Tree(cycle), {}, "d", cpu(1), False),
        ("nor one whose parent is missing", Tree(cycle), {}, "x", cpu(1), False),
        ("the rest goes on", Tree(cycle), {}, "c", cpu(2), True),
        ("the root's guarantee", Tree(top, cpu(8)), {"p": cpu(5)}, "p", cpu(2), False),
        ("the root's capability", Tree(top), {"g": cpu(2)}, "p", cpu(8), False),
    ]
    for what, tree, held, leaf, need, want in fits_cases:
        if tree.fits(leaf, need, tree.alloc(held)) != want:
            failures += 1
            print("self-test FAILED: fits: %s: want %s" % (what, want), file=sys.stderr)
    def pod(name, node=None, gate=False, message=None, deleting=False, template=None, made=False):
        p = {"metadata": {"name": name}, "spec": {}, "status": {}}
        if template:
            p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": template}]
            if made:
                p["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": name + "-gpu-x"}]
        if node:
            p["spec"]["nodeName"] = node
        if gate:
            p["spec"]["schedulingGates"] = [{"name": GATE}]
        if message:
            p["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                          "message": message}]
        if deleting:
            p["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        return p

    # What claims count as in a queue: a template per pod, a shared claim once, a class unseen nothing.
    spec = lambda cls, n=1, mode="ExactCount": {"devices": {"requests": [{"name": "r", "exactly": {
        "deviceClassName": cls, "count": n, "allocationMode": mode}}]}}
    dra = ({"gpu": "example.com/gpu"}, {("ns", "two"): {"spec": {"spec": spec("gpu", 2)}},
                                         ("ns", "other"): {"spec": {"spec": spec("nvidia")}},
                                         ("ns", "all"): {"spec": {"spec": spec("gpu", 1, "All")}}},
           {("ns", "shared"): {"spec": spec("gpu")}})
    claimer = lambda *refs: {"metadata": {"namespace": "ns"}, "spec": {"resourceClaims": [dict(r) for r in refs]}}
    seen = set()
    got = {}
    for p in (claimer({"resourceClaimTemplateName": "two"}, {"resourceClaimName": "shared"}),
              claimer({"resourceClaimName": "shared"}), claimer({"resourceClaimTemplateName": "other"}),
              claimer({"resourceClaimTemplateName": "all"})):
        add(got, pod_devices(p, dra, seen))
    if got != {"example.com/gpu": 3}:
        failures += 1
        print("self-test FAILED: pod_devices: %r, want 3 example.com/gpu" % got, file=sys.stderr)
    if class_resource({"metadata": {"name": "c"}}) != "deviceclass.resource.kubernetes.io/c" or \
            class_resource({"metadata": {"name": "c", "annotations": {"raygate.io/quota-resource": "x/y"}}}) != "x/y":
        failures += 1
        print("self-test FAILED: class_resource", file=sys.stderr)

    # A bound pod of an earlier admission, terminating after the eviction, while its gang is admitted again.
    def bound(deleting, scheduled):
        p = pod("w", "n1", deleting=deleting)
        p["status"]["conditions"] = [{"type": "PodScheduled", "status": "True", "lastTransitionTime": scheduled}]
        return p
    readmitted = {"metadata": {"annotations": {ADMITTED: "2026-11-29T07:53:57Z", EVICTED: "2026-11-29T07:53:56Z"}}}
    leftover_cases = [  # (what, pod, RayCluster, whether a leftover of an eviction)
        ("terminating, bound before the eviction", bound(True, "2026-11-29T07:53:46Z"), readmitted, True),
        ("not terminating", bound(False, "2026-11-29T07:53:46Z"), readmitted, False),
        ("bound after the eviction", bound(True, "2026-11-29T07:53:57Z"), readmitted, False),
        ("never evicted", bound(True, "2026-11-29T07:53:46Z"), {"metadata": {"annotations": {ADMITTED: "2026-11-29T07:53:57Z"}}},
         False),
    ]
    for what, p, rc, want in leftover_cases:
        if eviction_leftover(p, rc) != want:
            failures += 1
            print("self-test FAILED: eviction_leftover: %s: want %s" % (what, want), file=sys.stderr)

    no_claim = "0/6 nodes are available: 2 cannot allocate all claims, 4 Insufficient cpu."
    strand_cases = [  # (what, a gang's pods, expected names waiting on claims beside bound ones)
        ("head bound, workers pending on claims", [pod("h", "n1"), pod("w1", message=no_claim), pod("w2", message=no_claim)],
         ["w1", "w2"]),
        ("a claim not made (its template missing), no condition", [pod("h", "n1"), pod("w1", template="gone")], ["w1"]),
        ("a claim made, not yet tried", [pod("h", "n1"), pod("w1", template="one-gpu", made=True)], []),
        ("all bound", [pod("h", "n1"), pod("w1", "n2")], []),
        ("waiting whole on claims (none bound)", [pod("h", message=no_claim), pod("w1", message=no_claim)], []),
        ("pending for cpu, not devices", [pod("h", "n1"), pod("w1", message="0/4 nodes are available: 4 Insufficient cpu.")],
         []),
        ("pending on a missing volume, not devices",
         [pod("h", "n1"), pod("w1", message='0/4 nodes are available: persistentvolumeclaim "data" not found.')], []),
        ("gated, not yet released", [pod("h", "n1"), pod("w1", gate=True, message=no_claim)], []),
        ("the bound one terminating", [pod("h", "n1", deleting=True), pod("w1", message=no_claim)], []),
        ("not yet tried by the scheduler", [pod("h", "n1"), pod("w1")], []),
    ]
    for what, pods, want in strand_cases:
        got = sorted(name for name, _ in stranded(pods))
        if got != want:
            failures += 1
            print("self-test FAILED: claim-stranded: %s: want %s, got %s" % (what, want, got), file=sys.stderr)
    rc2 = {"apiVersion": "ray.io/v1", "spec": {"workerGroupSpecs": [{"groupName": "w", "replicas": 2, "minReplicas": 2}]}}
    cpu_msg = "0/4 nodes are available: 4 Insufficient cpu."
    gated_msg = dict(pod("w2"), status={"conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]})
    refuse_cases = [  # (what, pods of a gang of a head and 2 workers, expected names refused beside bound ones)
        ("head bound, a worker refused for cpu", [pod("h", "n1"), pod("w1", "n2"), pod("w2", message=cpu_msg)], ["w2"]),
        ("a missing volume holds it back as well", [pod("h", "n1"), pod("w1", message='persistentvolumeclaim "data" not found'),
                                                     pod("w2", "n1")], ["w1"]),
        ("waiting whole (none bound)", [pod("h", message=cpu_msg), pod("w1", message=cpu_msg), pod("w2", message=cpu_msg)], []),
        ("not yet tried (no reason Unschedulable)", [pod("h", "n1"), pod("w1", "n1"), gated_msg], []),
        ("all members bound, a tail refused", [pod("h", "n1"), pod("w1", "n1"), pod("w2", "n2"), pod("w3", message=cpu_msg)], []),
        ("refused but still gated", [pod("h", "n1"), pod("w1", gate=True, message=cpu_msg)], []),
    ]
    for what, pods, want in refuse_cases:
        got = sorted(partly_refused(rc2, pods))
        if got != want:
            failures += 1
            print("self-test FAILED: partly-placed: %s: want %s, got %s" % (what, want, got), file=sys.stderr)
    topo_failed, topo_cases = invtopology.self_test()
    for what, want, got in topo_failed:
        failures += 1
        print("self-test FAILED: topology: %s: want %d violations, got %s" % (what, want, got), file=sys.stderr)
    print("invariants self-test: %d cases, %d failed" % (len(cases) + len(fits_cases) + len(strand_cases) + len(refuse_cases) + topo_cases,
                                                                   failures), file=sys.stderr)
    return failures



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", required=True)
    ap.add_argument("--token", required=True, help="file with a bearer token")
    ap.add_argument("--ca", required=True)
    ap.add_argument("--namespace", default="", help="only this namespace's pods and RayClusters (default: all)")
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("--grace", type=float, default=5.0, help="seconds an admitted gang may stay partly ungated")
    ap.add_argument("--place-grace", type=float, default=45.0,
                    help="seconds an admitted gang may stay partly placed with a member refused by kube-scheduler")
    ap.add_argument("--evict-grace", type=float, default=10.0,
                    help="seconds an evicted gang may keep pods bound or ungated (raygate deletes them)")
    ap.add_argument("--duration", type=float, default=0, help="stop after this many seconds (default: at SIGTERM)")
    ap.add_argument("--violations", default=os.devnull, help="file to append violations to (JSON lines)")
    ap.add_argument("--status", default=os.devnull)
    ap.add_argument("--settled", action="store_true", help="check once that every gang that fits is admitted, and exit")
    if sys.argv[1:] == ["--self-test"]:
        return 1 if self_test() else 0
    args = ap.parse_args()
    if args.settled:
        return 3 if Checker(args).settled() else 0
    if args.violations == os.devnull or args.status == os.devnull:
        ap.error("--violations and --status are required unless --settled")
    return Checker(args).run()


if __name__ == "__main__":
    sys.exit(main())
