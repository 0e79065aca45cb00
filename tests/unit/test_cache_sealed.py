#!/usr/bin/env python3
"""Checks cache.h's promise: only the cache's own files write the cache's fields.

The cache is cache.c and, below it, model.c (what it keeps of each object,
its structs in model.h), shape.c (its interning pool, shape.h),
devices.c, dracache.c and sharedcarry.c (the device claims it prices,
devices.h, and which pod carries a shared claim), and
cachelease.c (the dispatch leases' sightings to record, cachelease.h) and
prioclass.c (the PriorityClasses it borrows, prioclass.h). Every
field of a struct those headers declare whose name no other struct of the
tree declares (so that `g->dirty = 0` can only be a cache field) is looked
for on the left of an assignment (=, +=, |=, ...) or beside ++/-- in every
other C file: product code, tests and benchmarks alike. Other modules change
the cache through its functions. The check also runs on a planted violation,
which it must find.

    test_cache_sealed.py SOURCE_ROOT
"""
import os
import re
import sys

root = sys.argv[1]
SKIP_DIRS = {".git", ".cluster", "build", "subprojects"}

sources = []
for dirpath, dirnames, filenames in os.walk(root):
    dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith(("build", ".cluster"))]
    for f in filenames:
        if f.endswith((".c", ".h")):
            sources.append(os.path.join(dirpath, f))

HEADERS = ("cache.h", "model.h", "shape.h")
OWNERS = ("cache.c", "cachelease.c", "model.c", "shape.c", "devices.c", "dracache.c", "sharedcarry.c", "prioclass.c")
SCHED = os.sep + os.path.join("lib", "sched") + os.sep
cache_hs = [p for p in sources if os.path.basename(p) in HEADERS and SCHED in p]
if len(cache_hs) != len(HEADERS):
    sys.exit("%s not found (or found twice): %r" % (", ".join(HEADERS), cache_hs))


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


STRUCT = re.compile(r"\bstruct\s+(\w+)\s*\{(.*?)\n\};", re.S)


def members(body):
    """Field names of a struct body (one level; nested braces are rare here and skipped)."""
    names = set()
    for decl in body.split(";"):
        decl = re.sub(r"\[[^\]]*\]", "", decl).strip()
        if not decl or "{" in decl or "}" in decl:
            continue
        fn = re.search(r"\(\s*\*\s*(\w+)\s*\)\s*\(", decl)  # a function pointer
        if fn:
            names.add(fn.group(1))
            continue
        # "type a, *b, c" : the names are the last word of each declarator
        head, *rest = decl.split(",")
        for d in [head] + rest:
            m = re.search(r"(\w+)\s*(?::\s*\d+)?\s*$", d.strip())
            if m:
                names.add(m.group(1))
    return names


def structs(text):
    return {m.group(1): members(m.group(2)) for m in STRUCT.finditer(strip_comments(text))}


cache_fields = {}
for cache_h in cache_hs:
    for name, fields in structs(open(cache_h).read()).items():
        if name == "cache" or name.startswith(("cache_", "shape_")):
            for f in fields:
                cache_fields.setdefault(f, set()).add(name)

others = set()
for path in sources:
    if path in cache_hs:
        continue
    for name, fields in structs(open(path, errors="replace").read()).items():
        others |= fields
unique = sorted(f for f in cache_fields if f not in others)

ASSIGN = r"(?:=(?!=)|\+=|-=|\*=|/=|%=|\|=|&=|\^=|<<=|>>=|\+\+|--)"


def violations(text, fields):
    found = []
    names = "|".join(sorted(fields))
    write = re.compile(r"(?:->|\.)\s*(" + names + r")\b\s*(?:\[[^\]]*\]\s*)*" + ASSIGN)
    pre = re.compile(r"(?:\+\+|--)\s*[\w\]\)\.>-]*(?:->|\.)\s*(" + names + r")\b")
    # flags is a common name: a write of it naming a pod flag is the cache's.
    flags = re.compile(r"(?:->|\.)\s*(flags)\s*" + ASSIGN + r".*\bCACHE_POD_")
    for lineno, line in enumerate(strip_comments(text).split("\n"), 1):
        for rx in (write, pre, flags):
            m = rx.search(line)
            if m:
                found.append((lineno, m.group(1), line.strip()))
                break
    return found


errors = []
# The check must catch what it is for.
planted = (
    "void f(struct cache_gang *g, struct cache *c)\n{\n    g->complete_ms = 5;\n    c->capacity_changed |= 1;\n"
    "    g->pods->flags &= (uint8_t)~CACHE_POD_TOLD;\n    ++g->queue->ngangs;\n}\n"
)
caught = {f for _, f, _ in violations(planted, unique)}
for f in ("complete_ms", "capacity_changed", "flags", "ngangs"):
    if f not in unique and f != "flags":
        errors.append("field %s is no longer checked (another struct declares one of that name?)" % f)
    elif f not in caught:
        errors.append("a planted write of %s was not found" % f)

for path in sorted(sources):
    if os.path.basename(path) in OWNERS and SCHED in path:
        continue
    for lineno, f, line in violations(open(path, errors="replace").read(), unique):
        errors.append("%s:%d: writes the cache's %s (%s)" % (os.path.relpath(path, root), lineno, f, line))

if len(unique) < 40:
    errors.append("only %d fields checked: the parser lost its way in %s?" % (len(unique), ", ".join(HEADERS)))
for e in errors:
    print(e)
print("%d of %d cache fields checked in %d files" % (len(unique), len(cache_fields), len(sources)))
sys.exit(1 if errors else 0)
