#!/usr/bin/env python3
"""Names that lead to files (docs/style.md: Names; docs/contributing.md: Layout).

Fails (exit 1), naming file, line and function, when, in the product's C
(lib/*/, lib/sched/*/ and the programs' folders gate/, webhook/, cli/, certs/,
dispatch/):

- an exported (not static) function of foo.c does not start with its file's
  name: foo_..., underscores aside (kube_watch_start in kubewatch.c), or the
  program's folder and then the file (dispatch_manager_run in
  dispatch/manager.c). A function named as its file is fine (dispatch_pick in
  dispatchpick.c);
- a function declared in foo.h (or foo_internal.h) is defined in another
  file than foo.c. That would hide a call from the include graph that
  check_layout.py reads (admitpass.h declaring what admit.c defines let
  admit.c and admittopo.c call each other unseen), so with this check every
  call between modules is an include, and a circle of calls is a circle
  check_layout.py finds.

usage: check_names.py SOURCE_ROOT
"""
import os
import re
import sys

PROGRAMS = ("gate", "webhook", "cli", "certs", "dispatch")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else", "case"}

COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"' + r"|'(?:\\.|[^'\\\n])*'")
PREPROC = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)
# A function definition at the start of a line: return type, name, parameters, body.
DEFINITION = re.compile(r"^([A-Za-z_][^;{}()=]*?)\b([A-Za-z_]\w*)\s*\(([^;{}]*?)\)\s*\{", re.M)
# A prototype: return type, name, parameters, optional attributes, semicolon.
PROTOTYPE = re.compile(r"^([A-Za-z_][^;{}()=]*?)\b([A-Za-z_]\w*)\s*\(([^;{}]*?)\)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)*;", re.M)


def blank(m):
    """Text replaced by spaces, newlines kept, so that offsets map to the same lines."""
    return "".join(c if c == "\n" else " " for c in m.group(0))


def code_of(path):
    """The file's text without comments, strings and preprocessor lines (same line numbers)."""
    text = open(path, encoding="utf-8").read()
    return PREPROC.sub(blank, STRING.sub(blank, COMMENT.sub(blank, text)))


def top_level(code):
    """code with everything inside braces blanked: only what is at file scope is left."""
    out, depth = [], 0
    for c in code:
        if c == "{":
            depth += 1
            out.append("{" if depth == 1 else " ")
        elif c == "}":
            depth -= 1
            out.append("}" if depth == 0 else " ")
        else:
            out.append(c if depth == 0 or c == "\n" else " ")
    return "".join(out)


def folders(root):
    """The product's folders, relative to root: lib/<d>, lib/<d>/<room>, and the programs'."""
    found = []
    lib = os.path.join(root, "lib")
    for d in sorted(os.listdir(lib)):
        path = os.path.join(lib, d)
        if not os.path.isdir(path):
            continue
        found.append("lib/" + d)
        found += ["lib/%s/%s" % (d, r) for r in sorted(os.listdir(path)) if os.path.isdir(os.path.join(path, r))]
    return found + [d for d in PROGRAMS if os.path.isdir(os.path.join(root, d))]


def functions(root, folder, ext, pattern):
    """(file, line, name, return type) of every match of pattern in folder's files ending in ext."""
    out = []
    for f in sorted(os.listdir(os.path.join(root, folder))):
        if not f.endswith(ext):
            continue
        code = top_level(code_of(os.path.join(root, folder, f)))
        for m in pattern.finditer(code):
            if m.group(2) in KEYWORDS:
                continue
            line = code.count("\n", 0, m.start(2)) + 1
            out.append(("%s/%s" % (folder, f), line, m.group(2), m.group(1)))
    return out


def prefix_ok(name, stem, program):
    """Whether name starts with stem (underscores aside), or with program and stem, at a word boundary."""
    words = name.split("_")
    heads = {"".join(words[:i]) for i in range(1, len(words) + 1)}
    flat = stem.replace("_", "")
    return flat in heads or (program is not None and program + flat in heads)


def module_of(path):
    """foo for foo.c, foo.h and foo_internal.h."""
    stem = os.path.basename(path)[:-2]
    return stem[: -len("_internal")] if stem.endswith("_internal") else stem


def check_prefixes(defs):
    """Messages for exported functions that do not carry their file's name."""
    bad = []
    for path, line, name, ret in defs:
        if "static" in ret.split() or name == "main":
            continue
        folder = os.path.dirname(path)
        program = folder if folder in PROGRAMS else None
        stem = os.path.basename(path)[:-2]
        if not prefix_ok(name, stem, program):
            want = "%s_" % stem + (" or %s_%s_" % (program, stem) if program else "")
            bad.append("%s:%d: %s is exported by %s but does not start with %s" % (path, line, name, os.path.basename(path), want))
    return bad


def check_homes(defs, protos):
    """Messages for functions declared in foo.h and defined outside foo.c."""
    where = {}
    for path, line, name, ret in defs:
        if "static" not in ret.split():
            where.setdefault(name, (path, line))
    bad = []
    for path, line, name, ret in protos:
        if "static" in ret.split() or "typedef" in ret.split() or name not in where:
            continue
        dpath, dline = where[name]
        if module_of(dpath) != module_of(path) or os.path.dirname(dpath) != os.path.dirname(path):
            bad.append("%s:%d: %s is declared here but defined in %s:%d; define it in %s.c, or declare it in %s" %
                       (path, line, name, dpath, dline, module_of(path), dpath[:-2] + ".h"))
    return bad


def self_check():
    """The checks must catch what they are for."""
    errors = []
    cases = [("kube_watch_start", "kubewatch", None, True), ("hypernodes_create", "hypernode", None, False),
             ("dispatch_pick", "dispatchpick", None, True), ("dispatch_manager_run", "manager", "dispatch", True),
             ("kube_get", "kubereq", None, False), ("topo_mode_name", "topology", None, False)]
    for name, stem, program, want in cases:
        if prefix_ok(name, stem, program) != want:
            errors.append("self-check: prefix_ok(%s, %s) should be %s" % (name, stem, want))
    defs = [("lib/sched/admit/admit.c", 9, "admitpass_wait", "void ")]
    protos = [("lib/sched/admit/admitpass.h", 3, "admitpass_wait", "void ")]
    if len(check_homes(defs, protos)) != 1:
        errors.append("self-check: a function declared in admitpass.h and defined in admit.c was not found")
    code = "int f(void)\n{\n    if (x) {\n    }\n}\n"
    if [m.group(2) for m in DEFINITION.finditer(top_level(code))] != ["f"]:
        errors.append("self-check: the definition scan found more or less than f")
    return errors


def main():
    root = sys.argv[1]
    errors = self_check()
    for e in errors:
        print(e)
    if errors:
        return 1
    defs, protos = [], []
    for folder in folders(root):
        defs += functions(root, folder, ".c", DEFINITION)
        protos += functions(root, folder, ".h", PROTOTYPE)
    if not defs or not protos:
        print("no functions found under %s" % root)
        return 1
    bad = check_prefixes(defs) + check_homes(defs, protos)
    for message in bad:
        print(message)
    exported = sum(1 for d in defs if "static" not in d[3].split() and d[2] != "main")
    print("%d exported functions, %d declarations, %d violations" % (exported, len(protos), len(bad)))
    return 1 if bad else 0


sys.exit(main())
