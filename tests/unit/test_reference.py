#!/usr/bin/env python3
"""docs/reference.md's tables match the product code.

    test_reference.py SOURCE_ROOT

Reads every .c and .h file under the product folders (lib, gate, webhook, cli,
certs, dispatch), whatever file a name lives in, with comments removed and adjacent string
literals joined, and extracts:

  flags        the first argument of every FLAG_*( "name", ... ) table line; the
               program is the folder (gate/ is raygate-gate, webhook/
               raygate-webhook, certs/ raygate-certs, cli/ kubectl-raygate; a
               flag table elsewhere must appear under some program);
  annotations  every string literal that is a whole key raygate.io/..., every
               ray.io/... or volcano.sh/... key (not an apiVersion), and every
               key #defined as <MODULE>_LABEL_<X> or <MODULE>_ANNOTATION_<X>;
  metrics      the name given to metrics_counter_create, metrics_gauge_create
               and metrics_histogram_create (a literal, a #define, or a
               variable assigned a literal);
  reasons      the argument after "Warning" or "Normal" in any call (the Event
               builders and posters take type, then reason), resolved as
               above, plus every name evict_reason_name returns.

and compares them with the tables of docs/reference.md (under its "Flags",
"Annotations and labels", "Metrics" and "Event reasons" headings; a flag table
under a heading naming its program): every name in the code must have a row, and
every row must name something the code still has (for annotations and labels: a
string literal equal to the key, anywhere).

Then it deletes one row of each table from a copy of docs/reference.md and checks
that the comparison notices, so that a parser that reads nothing cannot pass.

README.md's "## Most used" table names a few of them; each must be a row of
docs/reference.md too (so a renamed flag or key fails there as well), and the
README must link docs/reference.md.
Standard library only.
"""
import os
import re
import sys

PRODUCT_DIRS = ("lib", "gate", "webhook", "cli", "certs", "dispatch")
PROGRAMS = {"gate": "raygate-gate", "webhook": "raygate-webhook", "certs": "raygate-certs", "cli": "kubectl-raygate",
            "dispatch": "raygate-dispatch"}
LITERAL = r'"((?:[^"\\\n]|\\.)*)"'
REFERENCE = os.path.join("docs", "reference.md")
# Fewest rows README.md's "## Most used" table must name (a parser that reads none must fail).
MOST_USED_MINIMUM = 5
# Fewest names each extractor must find: a refactoring that hides names from
# the extractor must make the test fail, not pass with nothing to compare.
MINIMUM = {"flags": 30, "annotations": 15, "metrics": 10, "reasons": 4}


def skip_space_and_comments(src, i):
    while i < len(src):
        if src[i].isspace():
            i += 1
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = len(src) if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            i = len(src) if j < 0 else j + 2
        else:
            break
    return i


def end_of_quoted(src, i):
    """src[i] is a quote; returns the index after the closing one."""
    q, j = src[i], i + 1
    while j < len(src) and src[j] != q and src[j] != "\n":
        j += 2 if src[j] == "\\" else 1
    return j + 1


def clean(src):
    """C source without comments, adjacent string literals joined, line count kept."""
    out, i, n = [], 0, len(src)
    while i < n:
        if src.startswith("//", i) or src.startswith("/*", i):
            j = skip_space_and_comments(src, i)
            out.append(" " + "\n" * src.count("\n", i, j))
            i = j
        elif src[i] == "'":
            j = end_of_quoted(src, i)
            out.append(src[i:j])
            i = j
        elif src[i] == '"':
            parts, j, lines = [], i, 0
            while True:
                k = end_of_quoted(src, j)
                parts.append(src[j + 1:k - 1])
                m = skip_space_and_comments(src, k)
                lines += src.count("\n", k, m)
                if m < n and src[m] == '"':
                    j = m
                    continue
                break
            out.append('"' + "".join(parts) + '"' + "\n" * lines)
            i = k if not lines else m
        else:
            out.append(src[i])
            i += 1
    return "".join(out)


def read_product(root):
    """{relative path: cleaned text} of every .c and .h file of the product."""
    files = {}
    for d in PRODUCT_DIRS:
        for dirpath, _, names in os.walk(os.path.join(root, d)):
            for name in sorted(names):
                if name.endswith((".c", ".h")):
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8") as f:
                        files[os.path.relpath(path, root)] = clean(f.read())
    return files


def call_args(text, open_paren):
    """The top-level arguments of the call whose "(" is at open_paren, stripped."""
    args, depth, start, i = [], 0, open_paren + 1, open_paren
    while i < len(text):
        c = text[i]
        if c in "\"'":
            i = end_of_quoted(text, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(text[start:i].strip())
                return args
        elif c == "," and depth == 1:
            args.append(text[start:i].strip())
            start = i + 1
        i += 1
    return args


class Code:
    def __init__(self, root):
        self.files = read_product(root)
        self.defines = {}
        for text in self.files.values():
            for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+(.+)$", text, re.M):
                self.defines.setdefault(m.group(1), m.group(2).strip())
        self.literals = set()
        for text in self.files.values():
            self.literals.update(re.findall(LITERAL, text))
        self.unresolved = []

    def calls(self, name_pattern):
        """(path, line, index of "(", args) of every call of a function whose name matches name_pattern."""
        for path, text in self.files.items():
            for m in re.finditer(r"\b(" + name_pattern + r")\s*\(", text):
                line_start = text.rfind("\n", 0, m.start()) + 1
                if text[line_start:m.start()].lstrip().startswith("#"):
                    continue  # a macro's definition, not a call
                before = re.search(r"(\w+|\S)\s*$", text[max(0, m.start() - 200):m.start()])
                if before and (before.group(1) == "*" or re.fullmatch(r"\w+", before.group(1))) and \
                        before.group(1) not in ("return", "else", "do"):
                    continue  # a declaration or definition: a type comes before the name
                yield path, text.count("\n", 0, m.start()) + 1, m.end() - 1, call_args(text, m.end() - 1)

    def function_returns(self, name, depth=0):
        """Literals the function name returns (directly or through a #define)."""
        found = set()
        for text in self.files.values():
            for m in re.finditer(r"\b" + re.escape(name) + r"\s*\([^;{)]*\)\s*\{", text):
                body = body_at(text, m.end() - 1)
                for r in re.finditer(r"\breturn\s+([^;]+);", body):
                    found |= self.values(r.group(1), body, len(body), depth + 1)
        return found

    def is_event_type(self, arg, depth=0):
        """arg is "Warning" or "Normal", a macro that is, or COND ? one : the other."""
        if arg in ('"Warning"', '"Normal"'):
            return True
        m = re.fullmatch(r"[^?]+\?\s*([^:]+?)\s*:\s*(.+?)\s*", arg, re.S)
        if m and depth < 8:
            return self.is_event_type(m.group(1), depth + 1) and self.is_event_type(m.group(2), depth + 1)
        return depth < 8 and arg in self.defines and self.is_event_type(self.defines[arg], depth + 1)

    def values(self, expr, text, pos, depth=0):
        """The string literals expr can be: its literals, its macros' and, for a
        variable, the literals last assigned to it before pos in text."""
        expr = expr.strip()
        found = set(re.findall(LITERAL, expr))
        for ident in re.findall(r"\b[A-Za-z_]\w*\b", re.sub(LITERAL, " ", expr)):
            if ident in self.defines and depth < 8:
                found |= self.values(self.defines[ident], text, pos, depth + 1)
        if found or depth >= 8:
            return found
        if re.fullmatch(r"[A-Za-z_]\w*", expr):
            assigned = list(re.finditer(r"\b" + expr + r"\s*=(?!=)([^;]*);", text[:pos]))
            if assigned:
                return self.values(assigned[-1].group(1), text, assigned[-1].start(), depth + 1)
        m = re.fullmatch(r"([A-Za-z_]\w*)\s*\(.*\)", expr, re.S)
        if m:
            return self.function_returns(m.group(1), depth + 1)
        return found


def body_at(text, brace):
    depth, i = 0, brace
    while i < len(text):
        c = text[i]
        if c in "\"'":
            i = end_of_quoted(text, i)
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[brace:i + 1]
        i += 1
    return text[brace:]


def extract(code):
    """{kind: {name: where}}; flags are "program --name"."""
    got = {"flags": {}, "annotations": {}, "metrics": {}, "reasons": {}}
    for path, line, _, args in code.calls(r"FLAG_[A-Z_]+"):
        names = re.findall(LITERAL, args[0]) if args else []
        if len(names) != 1:
            code.unresolved.append(f"{path}:{line}: a flag whose name is not a literal: {args[:1]}")
            continue
        top = path.split(os.sep)[0]
        got["flags"][f"{PROGRAMS.get(top, '*')} --{names[0]}"] = f"{path}:{line}"
    for path, text in code.files.items():
        for m in re.finditer(r'"((?:raygate\.io|ray\.io|volcano\.sh)/[a-z][a-z0-9.-]*)"', text):
            if not re.fullmatch(r"v\d+(?:(?:alpha|beta)\d+)?", m.group(1).split("/", 1)[1]):
                got["annotations"].setdefault(m.group(1), f"{path}:{text.count(chr(10), 0, m.start()) + 1}")
    for path, text in code.files.items():
        # Keys named by convention: #define <MODULE>_LABEL_<X> "key", <MODULE>_ANNOTATION_<X> "key".
        for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+\w*_(?:LABEL|ANNOTATION)_\w+[ \t]+" + LITERAL, text, re.M):
            got["annotations"].setdefault(m.group(1), f"{path}:{text.count(chr(10), 0, m.start()) + 1}")
    for path, line, pos, args in code.calls(r"metrics_(?:counter|gauge|histogram)_create"):
        names = code.values(args[1], code.files[path], pos) if len(args) > 1 else set()
        if not names:
            code.unresolved.append(f"{path}:{line}: a metric family whose name this test cannot tell: {args[1:2]}")
        for n in names:
            got["metrics"][n] = f"{path}:{line}"
    for path, line, pos, args in code.calls(r"[A-Za-z_]\w*"):
        for k, a in enumerate(args[:-1]):
            if code.is_event_type(a):
                reasons = code.values(args[k + 1], code.files[path], pos)
                if not reasons:
                    code.unresolved.append(f"{path}:{line}: an Event reason this test cannot tell: {args[k + 1]}")
                for r in reasons:
                    got["reasons"][r] = f"{path}:{line}"
                break
    evict = code.function_returns("evict_reason_name")
    if not evict:
        code.unresolved.append("evict_reason_name: not found, or it returns no name this test can read")
    for r in evict:
        if r:
            got["reasons"].setdefault(r, "evict_reason_name")
    return got


def reference_tables(doc):
    """{kind: {name: line}} from the tables under the headings "Flags" (a
    subheading per program), "Annotations and labels", "Metrics", "Event reasons"."""
    tables = {"flags": {}, "annotations": {}, "metrics": {}, "reasons": {}}
    kinds = {"flags": "flags", "annotations": "annotations", "metrics": "metrics", "event": "reasons"}
    kind, level, program = None, 0, None
    for number, line in enumerate(doc.splitlines(), 1):
        heading = re.match(r"(#+)\s+(.*)", line)
        if heading:
            depth, title = len(heading.group(1)), heading.group(2).strip()
            if title.split() and title.split()[0].lower() in kinds:
                kind, level, program = kinds[title.split()[0].lower()], depth, None
            elif kind is not None and depth > level:
                program = title.strip("`")
            else:
                kind = None
            continue
        if kind is None or not line.startswith("|") or re.match(r"\|\s*-", line):
            continue
        first = line.split("|")[1]
        names = re.findall(r"`([^`]+)`", first)
        if kind == "flags":
            for flag in re.findall(r"--([a-z0-9][a-z0-9-]*)", " ".join(names)):
                tables[kind][f"{program} --{flag}"] = number
        else:
            for n in names:
                tables[kind][n.split(":")[0].split("=")[0].strip()] = number
    return tables


def most_used(readme, tables):
    """Problems of README.md's "## Most used" table: each name a row of docs/reference.md."""
    problems, count, inside = [], 0, False
    for number, line in enumerate(readme.splitlines(), 1):
        if line.startswith("## "):
            inside = line[3:].strip().lower() == "most used"
            continue
        if not inside or not line.startswith("|") or re.match(r"\|\s*-", line):
            continue
        for name in re.findall(r"`([^`]+)`", line.split("|")[1]):
            flag = re.match(r"((?:raygate|kubectl)-[a-z]+)\s+--([a-z0-9][a-z0-9-]*)", name)
            key = f"{flag.group(1)} --{flag.group(2)}" if flag else name.split(":")[0].split("=")[0].strip()
            kind = "flags" if flag else next((k for k in tables if k != "flags" and key in tables[k]), None)
            count += 1
            if kind is None or key not in tables[kind]:
                problems.append(f"README.md:{number}: {key} (Most used) is not a row of {REFERENCE}")
    if count < MOST_USED_MINIMUM:
        problems.append(f"README.md's \"## Most used\" table names {count} (expected at least {MOST_USED_MINIMUM})")
    if "(docs/reference.md)" not in readme:
        problems.append(f"README.md does not link {REFERENCE}")
    return problems


def compare(got, tables, literals):
    """Problems, one line each."""
    problems = []
    for kind in ("flags", "annotations", "metrics", "reasons"):
        listed = tables[kind]
        for name, where in sorted(got[kind].items()):
            if kind == "flags" and name.startswith("* "):
                if not any(k.split(" ", 1)[1] == name[2:] for k in listed):
                    problems.append(f"{kind}: {name[2:]} ({where}) has no row in {REFERENCE}")
            elif name not in listed:
                problems.append(f"{kind}: {name} ({where}) has no row in {REFERENCE}")
        for name, number in sorted(listed.items()):
            gone = name not in literals if kind == "annotations" else (
                name not in got[kind] and f"* {name.split(' ', 1)[-1]}" not in got[kind])
            if gone:
                problems.append(f"{kind}: {REFERENCE}:{number}: {name} is no longer in the code")
    return problems


def read(root, path):
    with open(os.path.join(root, path), encoding="utf-8") as f:
        return f.read()


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    code = Code(root)
    got = extract(code)
    reference = read(root, REFERENCE)
    tables = reference_tables(reference)
    problems = list(code.unresolved)
    for kind, least in MINIMUM.items():
        if len(got[kind]) < least:
            problems.append(f"{kind}: only {len(got[kind])} found in the code (expected at least {least}): the extractor no longer sees them")
    problems += compare(got, tables, code.literals)
    # The comparison must notice a deleted row of each table.
    lines = reference.splitlines()
    for kind in tables:
        if not tables[kind]:
            problems.append(f"{kind}: {REFERENCE} has no such table")
            continue
        number = min(tables[kind].values())
        cut = "\n".join(lines[:number - 1] + lines[number:])
        if not compare(got, reference_tables(cut), code.literals):
            problems.append(f"{kind}: deleting {REFERENCE}:{number} went unnoticed")
    problems += most_used(read(root, "README.md"), tables)
    for p in problems:
        print(p)
    counts = ", ".join(f"{len(got[k])} {k}" for k in got)
    print(f"{'FAIL' if problems else 'ok'}: {counts} in the code; {sum(map(len, tables.values()))} rows in {REFERENCE}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
