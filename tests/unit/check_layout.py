#!/usr/bin/env python3
"""The layout of the source tree (docs/contributing.md: Layout; docs/style.md: Contracts between modules).

Fails (exit 1), naming file and line, when:

- a file of lib/wire, lib/dra, lib/gang, lib/sched or lib/dispatch (policy, pure) includes a header of
  lib/io/ (the Kubernetes client, kubeconfig, the listener, the log) or a
  system header for I/O or threads (curl, pthread, unistd, sockets, files), or
  calls a clock: policy gets the time passed in;
- one of them includes metrics.h or calls metrics_*: policy reports what it
  decided, the programs count it;
- a folder of lib/ includes a header of a folder above it. The folders, bottom
  up: core (errors, util, names, flags, metrics), wire (formats, on core),
  io (the edges, on core and wire: the client reads wire formats), dra
  (Kubernetes' dynamic resource allocation objects, on core and wire), gang (on
  core, wire, dra), sched (on core, wire, dra, gang), dispatch (on core, wire,
  dra, gang, sched);
- a room of lib/sched (lib/sched/README.md), lib/gang (lib/gang/README.md)
  or gate/ (gate/README.md) includes a header of a room above it: the rooms,
  bottom up, are ROOMS[folder], each on those below it; the files at the top
  of gate/ (main, the controller, its watches) may use every room of it;
- a product folder holds more than MAX_C .c files: a folder that grows past it
  is split into rooms;
- a product header does not open with its contract: a comment whose first
  line names the module ("/*\n * x: what x decides");
- a product comment cites an issue ("issue 37", "issues 23, 24"): the
  tracker is not in the repository, so a comment says why in the code's own
  terms (the invariant, the Kubernetes or KubeRay behaviour, a docs/ section);
- product modules include each other in a circle. A module is x.c and x.h (and
  a private x_internal.h); it uses module y when one of its files includes
  "y.h" (or "y_internal.h") and that is a file of lib/*/,
  gate/, webhook/, cli/, certs/ or dispatch/. Every circle is printed.
  check_names.py makes sure a function is defined in the .c of the header
  that declares it, so these include circles are call circles too.

usage: check_layout.py SOURCE_ROOT
"""
import os
import re
import sys

SYSTEM = {
    "curl/curl.h": "libcurl: network I/O",
    "pthread.h": "threads",
    "unistd.h": "system calls",
    "fcntl.h": "files",
    "poll.h": "waiting on descriptors",
    "sys/socket.h": "sockets",
    "netdb.h": "name resolution",
    "sys/stat.h": "files",
}
PURE = ("wire", "dra", "gang", "sched", "dispatch")
CLOCKS = ("clock_gettime", "gettimeofday", "time", "clock")

# The folders of lib/ a folder of lib/ may include headers of (besides its own).
LAYERS = {
    "core": set(),
    "wire": {"core"},
    "io": {"core", "wire"},
    "dra": {"core", "wire"},
    "gang": {"core", "wire", "dra"},
    "sched": {"core", "wire", "dra", "gang"},
    "dispatch": {"core", "wire", "dra", "gang", "sched"},
}
# The rooms of a folder, bottom up: a room may include headers of its own and of the rooms before it.
SCHED_ROOMS = ("record", "cache", "result", "queues", "place", "preempt", "admit", "scan", "status")
ROOMS = {
    "lib/sched": SCHED_ROOMS,
    # the Ray objects as gangs; the hold of a queued RayCluster; the webhook's review
    "lib/gang": ("model", "hold", "review"),
    # what a pass decided, written; who leads; what the gate shows (its top: main, controller, watches)
    "gate": ("apply", "lead", "status"),
}
MAX_C = 15
# Product folders besides lib/*/: programs, whose modules take part in the circle check.
PROGRAMS = ("gate", "webhook", "cli", "certs", "dispatch")

# Exceptions, each with the reason it stands (none today).
METRICS_ALLOW = set()
LAYER_ALLOW = set()

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
CALL = re.compile(r"(?<![\w.>])(%s)\s*\(" % "|".join(CLOCKS))
METRICS_CALL = re.compile(r"(?<![\w.>])(metrics_\w+)\s*\(")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
# Strings, characters and comments in the order they come, so that "//" in a string or '"' in a comment is read right.
TOKEN = re.compile(r'"(?:\\.|[^"\\\n])*"' + r"|'(?:\\.|[^'\\\n])*'|/\*.*?\*/|//[^\n]*", re.S)
ISSUE = re.compile(r"\bissues?\s*#?\d+(?:\s*(?:,|and)\s*\d+)*", re.I)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')


def blank(m):
    """A comment or string replaced by spaces, its newlines kept (line numbers stay)."""
    return "".join(c if c == "\n" else " " for c in m.group(0))


def sources(root):
    """Product folders (relative to root: lib/core, lib/sched/cache, ..., gate, ...) and their .c and .h files."""
    lib = os.path.join(root, "lib")
    folders = []
    for d in sorted(os.listdir(lib)):
        if os.path.isdir(os.path.join(lib, d)):
            folders.append("lib/" + d)
            folders += ["lib/%s/%s" % (d, r) for r in sorted(os.listdir(os.path.join(lib, d))) if os.path.isdir(os.path.join(lib, d, r))]
    for d in PROGRAMS:
        if os.path.isdir(os.path.join(root, d)):
            folders.append(d)
            folders += ["%s/%s" % (d, r) for r in sorted(os.listdir(os.path.join(root, d))) if os.path.isdir(os.path.join(root, d, r))]
    return {d: sorted(f for f in os.listdir(os.path.join(root, d)) if f.endswith((".c", ".h"))) for d in folders}


def includes(path):
    """(line number, '<' or '"', header) of every #include of path, and its code without comments and strings."""
    text = open(path, encoding="utf-8").read()
    found = []
    for lineno, raw in enumerate(text.split("\n"), 1):
        m = INCLUDE.match(raw)
        if m:
            found.append((lineno, m.group(1), m.group(2)))
    return found, STRING.sub(blank, COMMENT.sub(blank, text))


def check_pure(root, tree):
    """I/O, clocks and metrics in lib/wire, lib/dra, lib/gang, lib/sched, lib/dispatch; returns the number of violations."""
    io_headers = set(f for f in tree.get("lib/io", []) if f.endswith(".h"))
    bad = 0
    for folder in sorted(tree):
        if not folder.startswith("lib/") or folder.split("/")[1] not in PURE:
            continue
        for f in tree[folder]:
            name = "%s/%s" % (folder[4:], f)
            incs, code = includes(os.path.join(root, "lib", name))
            for lineno, kind, header in incs:
                why = SYSTEM.get(header) or (header.startswith("curl/") and "libcurl: network I/O")
                if kind == '"' and os.path.basename(header) in io_headers:
                    why = "lib/io/%s, an edge" % os.path.basename(header)
                if why:
                    print("lib/%s:%d: includes %s (%s); policy is pure, I/O goes in lib/io/" % (name, lineno, header, why))
                    bad += 1
                if kind == '"' and os.path.basename(header) == "metrics.h" and name not in METRICS_ALLOW:
                    print("lib/%s:%d: includes metrics.h; policy reports what it decided, the programs count it" % (name, lineno))
                    bad += 1
            for lineno, line in enumerate(code.split("\n"), 1):
                if INCLUDE.match(line):
                    continue
                for fn in CALL.findall(line):
                    print("lib/%s:%d: calls %s(): policy gets the time passed in" % (name, lineno, fn))
                    bad += 1
                for fn in METRICS_CALL.findall(line) if name not in METRICS_ALLOW else ():
                    print("lib/%s:%d: calls %s(): policy reports what it decided, the programs count it" % (name, lineno, fn))
                    bad += 1
    return bad


def resolver(tree):
    """header name -> folder holding it: the includer's own folder first, then lib/'s, then the programs'."""
    where = {}
    for d in sorted(tree, key=lambda d: (not d.startswith("lib/"), d)):
        for f in tree[d]:
            if f.endswith(".h"):
                where.setdefault(f, d)

    def resolve(folder, header):
        base = os.path.basename(header)
        if header == base and base in tree[folder]:
            return folder
        return where.get(base) if header == base else None

    return resolve


def module_of(filename):
    """x for x.c, x.h, and x's private header x_internal.h."""
    stem = filename[:-2]
    return stem[: -len("_internal")] if stem.endswith("_internal") else stem


def edges(root, tree):
    """{(folder, module): {(folder, module): (file, line)}}: what each product module uses."""
    resolve = resolver(tree)
    uses = {}
    for d, files in tree.items():
        for f in files:
            mod = (d, module_of(f))
            uses.setdefault(mod, {})
            for lineno, kind, header in includes(os.path.join(root, d, f))[0]:
                if kind != '"':
                    continue
                to = resolve(d, header)
                if to is None:
                    continue
                target = (to, module_of(os.path.basename(header)))
                if target != mod:
                    uses[mod].setdefault(target, ("%s/%s" % (d, f), lineno))
    return uses


def split_room(folder):
    """(the folder with rooms, the room) of a folder: ("lib/sched", "cache"), ("gate", "") for gate's top, or (folder, None)."""
    for top in ROOMS:
        if folder == top:
            return top, ""
        if folder.startswith(top + "/"):
            return top, folder[len(top) + 1:]
    return folder, None


def room_message(folder, room):
    """What a room of folder may use, for a message."""
    rooms = ROOMS[folder]
    if room not in rooms:
        return "a room of %s not in ROOMS" % folder
    return ", ".join(rooms[:rooms.index(room) + 1])


def check_rooms(uses):
    """A room that includes a header of a room above it, or of its folder's top: one message each."""
    bad = []
    for (d, m), targets in sorted(uses.items()):
        top, mine = split_room(d)
        if mine is None:
            continue
        for (td, tm), (where, lineno) in sorted(targets.items()):
            ttop, theirs = split_room(td)
            if ttop != top or theirs == mine or mine == "":
                continue
            rooms = ROOMS[top]
            if mine in rooms and theirs in rooms and rooms.index(theirs) <= rooms.index(mine):
                continue
            what = "%s's top" % top if theirs == "" else "%s/%s" % (top, theirs)
            bad.append("%s:%d: includes %s/%s.h (%s): %s/%s may use only the rooms %s" %
                       (where, lineno, td, tm, what, top, mine, room_message(top, mine)))
    return bad


def check_openings(root, tree):
    """A product header that does not open with "/*" and " * x:" (x its module, x_internal its private part)."""
    bad = []
    for d, files in sorted(tree.items()):
        for f in files:
            if not f.endswith(".h"):
                continue
            with open(os.path.join(root, d, f), encoding="utf-8") as fh:
                head = [fh.readline().rstrip("\n") for _ in range(2)]
            if head != ["/*", head[1]] or not head[1].startswith(" * %s:" % f[:-2]):
                bad.append("%s/%s:1: does not open with its contract (\"/*\" then \" * %s: what it decides\")" % (d, f, f[:-2]))
    return bad


def check_sizes(tree):
    """A product folder with more than MAX_C .c files: one message each."""
    return ["%s: %d .c files, more than %d: split it into rooms" % (d, n, MAX_C)
            for d, n in sorted((d, sum(f.endswith(".c") for f in files)) for d, files in tree.items()) if n > MAX_C]


def check_layers(uses):
    """A lib/ folder (or lib/sched room) that includes a header of one above it: one message each."""
    bad = []
    for (d, m), targets in sorted(uses.items()):
        if not d.startswith("lib/"):
            continue
        mine = d[4:]
        for (td, tm), (where, lineno) in sorted(targets.items()):
            theirs = td[4:] if td.startswith("lib/") else td
            if theirs == mine:
                continue
            mtop, ttop = mine.split("/")[0], theirs.split("/")[0]
            if mtop == ttop:
                continue  # rooms of one folder: check_rooms()
            if ttop in LAYERS.get(mtop, set()):
                continue
            if (mine, "%s/%s.h" % (theirs, tm)) in LAYER_ALLOW:
                continue
            bad.append("%s:%d: includes %s/%s.h: lib/%s may use only %s" %
                       (where, lineno, td, tm, mine, ", ".join("lib/" + x for x in sorted(LAYERS.get(mtop, ()))) or "itself"))
    return bad


def cycles(uses):
    """Every elementary circle once, each as a list of modules starting from its smallest (Johnson's idea, small graph)."""
    found = []
    nodes = sorted(uses)
    index = {n: i for i, n in enumerate(nodes)}
    for start in nodes:
        # circles whose smallest module is start: walk only through larger ones
        stack = [(start, iter(sorted(uses[start])))]
        path, onpath = [start], {start}
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                onpath.discard(path.pop())
                continue
            if nxt == start:
                found.append(list(path))
            elif nxt in uses and index[nxt] > index[start] and nxt not in onpath:
                path.append(nxt)
                onpath.add(nxt)
                stack.append((nxt, iter(sorted(uses[nxt]))))
    return found


def comment_issues(text):
    """(line, cited text) of every issue number cited in a comment of C text (strings and code are not read)."""
    found = []
    for tok in TOKEN.finditer(text):
        if tok.group(0)[0] != "/":
            continue
        for m in ISSUE.finditer(tok.group(0)):
            found.append((text.count("\n", 0, tok.start() + m.start()) + 1, m.group(0)))
    return found


def check_comments(root, tree):
    """A product comment that cites an issue number: one message each."""
    bad = []
    for d, files in sorted(tree.items()):
        for f in files:
            with open(os.path.join(root, d, f), encoding="utf-8") as fh:
                for line, cited in comment_issues(fh.read()):
                    bad.append("%s/%s:%d: a comment cites '%s': say why in the code's own terms or cite docs/" %
                               (d, f, line, cited))
    return bad


def self_check():
    """The checks must catch what they are for: planted circles, layering and metrics."""
    a, b, c, d, e, f = (("lib/sched", x) for x in "abcdef")
    site = ("x.c", 1)
    planted = {a: {b: site}, b: {c: site}, c: {a: site}, d: {a: site}, e: {f: site}, f: {e: site, d: site}}
    found = sorted(sorted(x) for x in cycles(planted))
    errors = []
    if found != [[a, b, c], [e, f]]:
        errors.append("self-check: planted circles a-b-c and e-f, found %r" % found)
    layered = {("lib/core", "x"): {("lib/sched", "y"): ("lib/core/x.c", 1)},
               ("lib/gang", "m"): {("lib/wire", "w"): ("lib/gang/m.c", 1)},
               ("lib/io", "k"): {("lib/wire", "quantity"): ("lib/io/k.c", 1)},
               ("lib/wire", "q"): {("lib/io", "log"): ("lib/wire/q.c", 1)},
               ("lib/dra", "d"): {("lib/gang", "gang"): ("lib/dra/d.c", 1)},
               ("lib/sched", "s"): {("lib/dra", "devsel"): ("lib/sched/s.c", 1)}}
    if len(check_layers(layered)) != 3:
        errors.append("self-check: planted core -> sched, wire -> io and dra -> gang (gang -> wire, io -> wire and "
                      "sched -> dra are allowed), found %r" % check_layers(layered))
    rooms = {("lib/sched/cache", "c"): {("lib/sched/admit", "a"): ("lib/sched/cache/c.c", 1)},
             ("lib/sched/admit", "a"): {("lib/sched/cache", "c"): ("lib/sched/admit/a.c", 1)},
             ("lib/sched/scan", "s"): {("lib/gang", "g"): ("lib/sched/scan/s.c", 1)},
             ("lib/gang", "g"): {("lib/sched/place", "p"): ("lib/gang/g.c", 1)}}
    found = check_layers(rooms) + check_rooms(rooms)
    if len(found) != 2:
        errors.append("self-check: planted sched/cache -> sched/admit and gang -> sched/place (admit -> cache, scan -> gang "
                      "are allowed), found %r" % found)
    gate = {("gate/apply", "a"): {("gate/status", "s"): ("gate/apply/a.c", 1), ("gate", "controller"): ("gate/apply/a.c", 2)},
            ("gate/status", "s"): {("gate/apply", "a"): ("gate/status/s.c", 1)},
            ("gate", "controller"): {("gate/status", "s"): ("gate/controller.c", 1)},
            ("lib/gang/model", "rayjob"): {("lib/gang/review", "mutate"): ("lib/gang/model/rayjob.h", 1)}}
    if len(check_rooms(gate)) != 3:
        errors.append("self-check: planted gate/apply -> gate/status, gate/apply -> gate's top and gang/model -> "
                      "gang/review (status -> apply, the top -> status are allowed), found %r" % check_rooms(gate))
    if len(check_sizes({"gate": ["x%d.c" % i for i in range(MAX_C + 1)], "cli": ["a.c", "a.h"]})) != 1:
        errors.append("self-check: a folder of %d .c files was not found" % (MAX_C + 1))
    if METRICS_CALL.findall("    metrics_gauge_set(m, 1);") != ["metrics_gauge_set"]:
        errors.append("self-check: a metrics_ call was not found")
    planted = ('/* early: weighed early (issue 26). */\n'
               'static const char *u = "see issue 5 // not a comment";\n'
               'int tissue3; /* tissues 4 are not issues */ char q = \'"\';\n'
               '// the sort was 17% of the CPU (Issue #37)\n'
               '/* a pass (docs/design.md, "Pacing"),\n * issues 23, 24 */\n')
    found = [line for line, _ in comment_issues(planted)]
    if found != [1, 4, 6]:
        errors.append("self-check: planted issue citations in comments on lines 1, 4 and 6 (not in a string or a "
                      "name), found lines %r" % found)
    return errors


def main():
    root = sys.argv[1]
    errors = self_check()
    for e in errors:
        print(e)
    if errors:
        return 1
    tree = sources(root)
    if not tree.get("lib/io") or not any(tree.get(f) for f in tree if f.startswith("lib/sched/")):
        print("no files in %s/lib/io or lib/sched/*/" % root)
        return 1
    bad = check_pure(root, tree)
    uses = edges(root, tree)
    for message in (check_layers(uses) + check_rooms(uses) + check_sizes(tree) + check_openings(root, tree) +
                    check_comments(root, tree)):
        print(message)
        bad += 1
    for circle in cycles(uses):
        steps = []
        for a, b in zip(circle, circle[1:] + circle[:1]):
            where, lineno = uses[a][b]
            steps.append("%s/%s -> %s/%s (%s:%d)" % (a[0], a[1], b[0], b[1], where, lineno))
        print("circle: " + "; ".join(steps))
        bad += 1
    nfiles = sum(len(f) for f in tree.values())
    print("%d files in %d folders, %d modules, %d violations" % (nfiles, len(tree), len(uses), bad))
    return 1 if bad else 0


sys.exit(main())
