#!/usr/bin/env python3
"""KubeRay's own samples through raygate's webhook (test_kuberay_samples.sh).

  kuberay_samples.py split SAMPLES DIR QUEUE
      Every YAML file under SAMPLES (recursively, sorted): each RayCluster,
      RayJob and RayService document (ray.io) is written to DIR/NNN.json with
      the label volcano.sh/queue-name=QUEUE added to its metadata.labels (and
      no metadata.namespace: the test applies it in its own). DIR/index gets
      one line per document, "NNN KIND VERB FILE#DOC": VERB is apply, or
      create for a document with only metadata.generateName (kubectl apply
      needs a name), FILE is relative to SAMPLES and DOC the document's index
      in it. Documents of the other ray.io kinds (RayCronJob) get the line
      "- KIND skip FILE#DOC": raygate admits none of them.

  kuberay_samples.py check DIR QUEUE [--deny FILE=TEXT ...]
      Judges what `kubectl VERB --dry-run=server -o json` answered for each
      document: DIR/NNN.rc (its exit status), DIR/NNN.out (the object),
      DIR/NNN.err (its stderr: warnings, errors). --deny: the document(s) of
      FILE are expected to be denied by raygate's webhook with a message
      containing TEXT. Prints one line per failure, then the skipped ones,
      then the summary line; exits 1 on any failure.

What is checked, on the object the apiserver returns (after the webhook):
- RayCluster: annotations raygate.io/min-member (equal to the count of the
  returned spec: 1 + each worker group's pods, as lib/gang/model/gang.h sizes it)
  and raygate.io/min-resources (a JSON object); the head and every worker
  template labelled volcano.sh/queue-name=QUEUE; with a name, the annotation
  scheduling.k8s.io/group-name ray-NAME-pg on the cluster and every template.
- RayJob with spec.rayClusterSpec: the same annotations on the RayJob (its
  min-member the cluster's), the same on the templates of rayClusterSpec; in
  K8sJobMode (the default) raygate.io/submitter-resources (a JSON object) and
  spec.submitterPodTemplate labelled with the queue and
  raygate.io/rayjob-submitter=true (and the group-name when named); in the
  other modes no raygate.io/submitter-resources.
- RayJob with spec.clusterSelector: left alone (no raygate.io annotation),
  with the webhook's warning naming spec.clusterSelector.
- RayService: only checked by the webhook (its queue must be a leaf; KubeRay
  copies its labels to the RayClusters it makes, mutated then): no raygate.io
  annotation, and the templates of spec.rayClusterConfig as they were sent.
A group-name is never checked on a document with only generateName: the
webhook does not know the name, and writes none; if one is written it must
name the generated name.

A document the apiserver answers "no matches for kind" (its CRD is not
installed) is skipped; any other error, or a denial not listed with --deny,
is a failure naming the file and the message, and so is a listed one that is
allowed. Standard library only (split also needs the yaml module).
"""
import json
import pathlib
import sys

QUEUE_LABEL = "volcano.sh/queue-name"
GROUP = "scheduling.k8s.io/group-name"
MIN_MEMBER = "raygate.io/min-member"
MIN_RESOURCES = "raygate.io/min-resources"
SUBMITTER_RESOURCES = "raygate.io/submitter-resources"
SUBMITTER_LABEL = "raygate.io/rayjob-submitter"
KINDS = ("RayCluster", "RayJob", "RayService")
NO_KIND = "no matches for kind"


def split(samples, out, queue):
    import yaml

    samples, out = pathlib.Path(samples), pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    lines = []
    for path in sorted(p for p in samples.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file()):
        rel = path.relative_to(samples)
        for i, doc in enumerate(yaml.safe_load_all(path.read_text())):
            if not isinstance(doc, dict) or not str(doc.get("apiVersion", "")).startswith("ray.io/"):
                continue
            kind = doc.get("kind")
            if kind not in KINDS:
                lines.append(f"- {kind} skip {rel}#{i}")
                continue
            meta = doc.get("metadata") or {}
            doc["metadata"] = meta
            meta.pop("namespace", None)
            meta["labels"] = dict(meta.get("labels") or {}, **{QUEUE_LABEL: queue})
            n += 1
            (out / f"{n:03d}.json").write_text(json.dumps(doc))
            verb = "apply" if meta.get("name") else "create"
            lines.append(f"{n:03d} {kind} {verb} {rel}#{i}")
    (out / "index").write_text("".join(line + "\n" for line in lines))


def min_member(spec):
    """1 + the worker groups' pods, as lib/gang/model/gang.h counts them."""
    n = 1
    autoscaling = spec.get("enableInTreeAutoscaling") is True
    for g in spec.get("workerGroupSpecs") or []:
        if g.get("suspend") is True:
            continue
        lo, hi = g.get("minReplicas", 0), g.get("maxReplicas", 2147483647)
        if autoscaling:
            r = lo
        elif lo > hi:
            r = hi
        else:
            r = min(max(g.get("replicas", 0), lo), hi)
        n += r * g.get("numOfHosts", 1)
    return n


def templates(spec):
    """(path, template) of the head and each worker group of a RayCluster spec."""
    yield "headGroupSpec.template", (spec.get("headGroupSpec") or {}).get("template") or {}
    for i, g in enumerate(spec.get("workerGroupSpecs") or []):
        yield f"workerGroupSpecs[{i}].template", g.get("template") or {}


def meta_of(obj, key):
    return (obj.get("metadata") or {}).get(key) or {}


class Checker:
    """The checks of one document: queue, its group (None without a name) and
    the group of the name the apiserver generated; problems found, one line each."""

    def __init__(self, queue, group, generated):
        self.queue, self.group_name, self.generated = queue, group, generated
        self.problems = []

    def expect(self, ok, what):
        if not ok:
            self.problems.append(what)

    def annotations(self, obj, spec, where):
        a = meta_of(obj, "annotations")
        want = str(min_member(spec))
        self.expect(a.get(MIN_MEMBER) == want, f"{where}annotation {MIN_MEMBER}: expected '{want}', got {a.get(MIN_MEMBER)!r}")
        self.json_object(a, MIN_RESOURCES, where, nonempty=True)

    def json_object(self, a, key, where, nonempty=False):
        try:
            v = json.loads(a[key])
            ok = isinstance(v, dict) and all(isinstance(x, str) for x in v.values()) and (v or not nonempty)
        except (KeyError, TypeError, ValueError):
            ok = False
        self.expect(ok, f"{where}annotation {key}: expected a{' non-empty' if nonempty else ''} JSON object, got {a.get(key)!r}")

    def group(self, obj, where):
        """The group-name annotation of obj: the group when named; absent or the generated name's otherwise."""
        got = meta_of(obj, "annotations").get(GROUP)
        if self.group_name is not None:
            self.expect(got == self.group_name, f"{where}annotation {GROUP}: expected '{self.group_name}', got {got!r}")
        else:
            self.expect(got in (None, self.generated),
                        f"{where}annotation {GROUP}: expected none or '{self.generated}', got {got!r}")

    def template(self, t, path):
        got = meta_of(t, "labels").get(QUEUE_LABEL)
        self.expect(got == self.queue, f"{path} label {QUEUE_LABEL}: expected '{self.queue}', got {got!r}")
        self.group(t, f"{path} ")

    def raycluster(self, obj):
        spec = obj.get("spec") or {}
        self.annotations(obj, spec, "")
        self.group(obj, "")
        for path, t in templates(spec):
            self.template(t, f"spec.{path}")

    def rayjob(self, obj, err):
        spec = obj.get("spec") or {}
        a = meta_of(obj, "annotations")
        if spec.get("clusterSelector"):
            ours = sorted(k for k in a if k.startswith("raygate.io/") or k == GROUP)
            self.expect(not ours, f"a RayJob with spec.clusterSelector got annotations {ours}")
            self.expect("spec.clusterSelector" in err, "no warning of the webhook naming spec.clusterSelector")
            return "clusterSelector"
        cluster = spec.get("rayClusterSpec") or {}
        self.annotations(obj, cluster, "")
        self.group(obj, "")
        for path, t in templates(cluster):
            self.template(t, f"spec.rayClusterSpec.{path}")
        mode = spec.get("submissionMode") or "K8sJobMode"
        if mode == "K8sJobMode":
            self.json_object(a, SUBMITTER_RESOURCES, "")
            t = spec.get("submitterPodTemplate") or {}
            self.template(t, "spec.submitterPodTemplate")
            got = meta_of(t, "labels").get(SUBMITTER_LABEL)
            self.expect(got == "true", f"spec.submitterPodTemplate label {SUBMITTER_LABEL}: expected 'true', got {got!r}")
        else:
            self.expect(SUBMITTER_RESOURCES not in a,
                        f"{mode}: annotation {SUBMITTER_RESOURCES} written: {a.get(SUBMITTER_RESOURCES)!r}")
        return mode

    def rayservice(self, obj, sent):
        ours = sorted(k for k in meta_of(obj, "annotations") if k.startswith("raygate.io/") or k == GROUP)
        self.expect(not ours, f"a RayService got annotations {ours}")
        got = dict(templates((obj.get("spec") or {}).get("rayClusterConfig") or {}))
        for path, t in templates((sent.get("spec") or {}).get("rayClusterConfig") or {}):
            for key in ("labels", "annotations"):
                self.expect(meta_of(got.get(path) or {}, key) == meta_of(t, key),
                            f"spec.rayClusterConfig.{path} metadata.{key} changed: {meta_of(got.get(path) or {}, key)}")


def check(out, queue, denies):
    out = pathlib.Path(out)
    failures, skipped, denied, checked = [], [], [], {k: 0 for k in KINDS}
    notes = {}  # RayJobs by submission mode (or clusterSelector)
    generated = 0  # documents with only generateName
    for line in (out / "index").read_text().splitlines():
        n, kind, verb, src = line.split(" ", 3)
        file = src.rsplit("#", 1)[0]
        if verb == "skip":
            skipped.append(f"{src} ({kind}: raygate admits no {kind})")
            continue
        rc = int((out / f"{n}.rc").read_text())
        err = (out / f"{n}.err").read_text().strip()
        deny = denies.get(file)
        if rc != 0:
            if NO_KIND in err:
                skipped.append(f"{src} ({kind}: {NO_KIND}, its CRD is not installed)")
            elif deny is not None and 'raygate.io" denied the request' in err and deny in err:
                denied.append(f"{src} ({deny})")
            else:
                why = f"not denied as expected ({deny}) but " if deny else ""
                failures.append(f"{src}: {kind} {why}failed: {' | '.join(err.splitlines())}")
            continue
        if deny is not None:
            failures.append(f"{src}: {kind} allowed, but raygate is expected to deny it ({deny})")
            continue
        obj = json.loads((out / f"{n}.out").read_text())
        sent = json.loads((out / f"{n}.json").read_text())
        name = (sent.get("metadata") or {}).get("name")
        c = Checker(queue, f"ray-{name}-pg" if name else None, f"ray-{(obj.get('metadata') or {}).get('name')}-pg")
        if kind == "RayCluster":
            c.raycluster(obj)
        elif kind == "RayJob":
            mode = c.rayjob(obj, err)
            notes[mode] = notes.get(mode, 0) + 1
        else:
            c.rayservice(obj, sent)
        checked[kind] += 1
        generated += not name
        failures += [f"{src}: {kind} {p}" for p in c.problems]
    total = sum(checked.values())
    for f in failures:
        print(f"FAIL: {f}")
    for s in skipped:
        print(f"skipped: {s}")
    for d in denied:
        print(f"denied as expected: {d}")
    detail = ", ".join(f"{checked[k]} {k}" for k in KINDS)
    modes = ", ".join(f"{v} {k}" for k, v in sorted(notes.items(), key=lambda kv: -kv[1]))
    print(f"summary: {total} documents checked ({detail}; RayJobs: {modes}; {generated} by generateName), "
          f"{len(skipped)} skipped, {len(denied)} denied as expected, {len(failures)} failures")
    return len(failures)


def main(argv):
    import argparse

    ap = argparse.ArgumentParser(description="KubeRay's samples through raygate's webhook")
    sub = ap.add_subparsers(dest="command", required=True)
    sp = sub.add_parser("split")
    sp.add_argument("samples")
    sp.add_argument("dir")
    sp.add_argument("queue")
    cp = sub.add_parser("check")
    cp.add_argument("dir")
    cp.add_argument("queue")
    cp.add_argument("--deny", action="append", default=[], metavar="FILE=TEXT")
    args = ap.parse_args(argv)
    if args.command == "split":
        split(args.samples, args.dir, args.queue)
        return 0
    denies = dict(d.split("=", 1) for d in args.deny)
    files = {line.split(" ", 3)[3].rsplit("#", 1)[0] for line in (pathlib.Path(args.dir) / "index").read_text().splitlines()}
    for f in sorted(set(denies) - files):
        print(f"FAIL: --deny {f}: no such sample")
    return 1 if check(args.dir, args.queue, denies) or set(denies) - files else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
