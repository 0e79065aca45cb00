"""The invariant checker's quantities and its tree of Queues: what invariants.py judges
capabilities and guarantees with, as the gate's lib/sched/queues/qtree.h does. Standard library only."""
import re
from fractions import Fraction

SUFFIXES = {"": 1, "m": Fraction(1, 1000), "u": Fraction(1, 10**6), "n": Fraction(1, 10**9),
            "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
            "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
QUANTITY = re.compile(r"^([+-]?[0-9.]+)(?:[eE]([+-]?[0-9]+))?([a-zA-Z]*)$")


def quantity(s):
    m = QUANTITY.match(str(s).strip())
    if not m or m.group(3) not in SUFFIXES:
        raise ValueError("bad quantity %r" % s)
    v = Fraction(m.group(1)) * SUFFIXES[m.group(3)]
    if m.group(2):
        v *= Fraction(10) ** int(m.group(2))
    return v


def add(into, res, scale=1):
    for k, v in res.items():
        into[k] = into.get(k, 0) + v * scale


def fmt(v):
    return str(v.numerator) if v.denominator == 1 else "%.3f" % float(v)


ROOT_NAME = "root"


def spec_resources(obj):
    return {k: quantity(v) for k, v in (obj or {}).items()}


class Tree:
    """The Queues' tree through spec.parent (the gate's lib/sched/queues/qtree.h).

    A queue without a parent ("" or "root") is a child of the root, which exists
    whether or not a Queue is named "root"; a Queue named "root" is the root
    itself (its capability caps the whole tree). A queue whose chain of parents
    does not reach the root (a cycle, a missing parent, under such a queue) is
    bad: it is treated as Closed, and only its own capability is checked.
    total: the room the root shares (the nodes' allocatable less what pods
    outside any queue hold), or None when unknown (the root's level unchecked).
    """

    def __init__(self, queues, total=None):
        self.cap, self.guarantee, self.parent = {}, {}, {}
        self.root_cap = {}
        for q in queues:
            name, spec = q["metadata"]["name"], q.get("spec") or {}
            if name == ROOT_NAME:
                self.root_cap = spec_resources(spec.get("capability"))
                continue
            p = spec.get("parent") or ROOT_NAME
            self.parent[name] = None if p == ROOT_NAME else p
            self.cap[name] = spec_resources(spec.get("capability"))
            self.guarantee[name] = spec_resources((spec.get("guarantee") or {}).get("resource"))
        self.bad = set()
        for name in self.parent:
            seen, at = set(), name
            while at is not None and at not in seen and at in self.parent:
                seen.add(at)
                at = self.parent[at]
            if at is not None:  # a cycle, or a parent that is not a queue
                self.bad.add(name)
        self.children = {None: []}
        for name in self.parent:
            if name not in self.bad:
                self.children.setdefault(self.parent[name], []).append(name)
        self.total = total

    def chain(self, name):
        """[name, its parent, ..., a child of the root]; [name] for a bad queue."""
        out = [name]
        while name not in self.bad and self.parent.get(name) is not None:
            name = self.parent[name]
            out.append(name)
        return out

    def is_leaf(self, name):
        return name in self.parent and name not in self.bad and not self.children.get(name)

    def alloc(self, held):
        """{queue: what its subtree holds}, from held {leaf: {resource: amount}}."""
        out = {name: {} for name in self.parent}
        for name, res in held.items():
            for at in self.chain(name) if name in self.parent else []:
                add(out[at], res)
        return out

    def room(self, parent, res):
        """The room parent (None: the root) shares among its children in res, or None when unlimited."""
        limits = [self.root_cap.get(res)]
        if parent is None:
            limits.append((self.total or {}).get(res))
        else:
            limits += [self.cap[at].get(res) for at in self.chain(parent)]
        limits = [v for v in limits if v is not None]
        return min(limits) if limits else None

    def guarantee_excess(self, parent, alloc, res, plus=None, extra=0):
        """(sum over parent's children of max(alloc, guarantee), room) in res when it exceeds the room, else None.
        plus: a child whose alloc grows by extra. Guarantees that alone pass the room are not judged."""
        kids = self.children.get(parent, [])
        if not any(self.guarantee[k].get(res, 0) > 0 for k in kids):
            return None
        room = self.room(parent, res)
        if room is None:
            return None
        used = sum(max(alloc[k].get(res, 0) + (extra if k == plus else 0), self.guarantee[k].get(res, 0)) for k in kids)
        if used > max(room, sum(self.guarantee[k].get(res, 0) for k in kids)):
            return used, room
        return None

    def violations(self, held):
        """[(key, kind, message)]: every queue's subtree within its capability and the root's, no guarantee lent."""
        alloc, out = self.alloc(held), []
        for name in sorted(self.parent):
            for res, v in sorted(self.cap[name].items()):
                if alloc[name].get(res, 0) > v:
                    kids = self.children.get(name)
                    what = "its subtree (%s) requests" % ", ".join(kids) if kids else "its ungated pods request"
                    out.append((("cap", name, res, fmt(alloc[name][res])), "over-capability",
                                "queue %s: %s %s %s, capability %s" % (name, what, res, fmt(alloc[name][res]), fmt(v))))
        top = {}
        for name in self.children.get(None, []):
            add(top, alloc[name])
        for res, v in sorted(self.root_cap.items()):
            if top.get(res, 0) > v:
                out.append((("cap", ROOT_NAME, res, fmt(top[res])), "over-capability",
                            "queue root: the tree requests %s %s, capability %s" % (res, fmt(top[res]), fmt(v))))
        for parent in sorted(self.children, key=lambda p: p or ""):
            kids = self.children[parent]
            for res in sorted({r for k in kids for r in self.guarantee[k]}):
                bad = self.guarantee_excess(parent, alloc, res)
                if bad:
                    out.append((("lent", parent, res, fmt(bad[0])), "guarantee-lent",
                                "under %s: the children's max(allocated, guarantee) in %s sum to %s, room %s (%s)" %
                                (parent or "the root", res, fmt(bad[0]), fmt(bad[1]),
                                 ", ".join("%s %s/%s" % (k, fmt(alloc[k].get(res, 0)), fmt(self.guarantee[k].get(res, 0)))
                                           for k in kids))))
        return out

    def fits(self, leaf, need, alloc):
        """Whether need fits leaf, every ancestor's capability and their parents' guarantees (qtree_fits)."""
        if not self.is_leaf(leaf):
            return False
        chain = self.chain(leaf)
        top = {}
        for name in self.children.get(None, []):
            add(top, alloc[name])
        for res, v in need.items():
            if v <= 0:
                continue
            if any(alloc[at].get(res, 0) + v > self.cap[at].get(res, alloc[at].get(res, 0) + v) for at in chain):
                return False
            if top.get(res, 0) + v > self.root_cap.get(res, top.get(res, 0) + v):
                return False
            if any(self.guarantee_excess(self.parent.get(at), alloc, res, at, v) for at in chain):
                return False
        return True
