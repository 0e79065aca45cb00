#!/usr/bin/env python3
"""lib/wire, lib/gang and lib/sched are pure: no I/O, no threads, no clock (README: Layout).

Fails (exit 1), naming file and line, when a file in one of them includes a
header of lib/io/ (the Kubernetes client, kubeconfig, the listener, the log)
or a system header for I/O or threads (curl, pthread, unistd, sockets, files),
or calls a clock: policy gets the time passed in. lib/core/ (errors, util,
names, flags' parsers, the metrics registry) is allowed.

usage: check_layout.py LIB_DIR
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
PURE = ("wire", "gang", "sched")
CLOCKS = ("clock_gettime", "gettimeofday", "time", "clock")

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
CALL = re.compile(r"(?<![\w.>])(%s)\s*\(" % "|".join(CLOCKS))
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')


def blank(m):
    """A comment or string replaced by spaces, its newlines kept (line numbers stay)."""
    return "".join(c if c == "\n" else " " for c in m.group(0))


def main():
    lib = sys.argv[1]
    io_headers = {f for f in os.listdir(os.path.join(lib, "io")) if f.endswith(".h")}
    files = sorted(os.path.join(d, f) for d in PURE for f in os.listdir(os.path.join(lib, d)) if f.endswith((".c", ".h")))
    if not files or not io_headers:
        print("no files in %s or no headers in %s/io" % ("/".join(PURE), lib))
        return 1
    bad = 0
    for name in files:
        text = open(os.path.join(lib, name), encoding="utf-8").read()
        code = STRING.sub(blank, COMMENT.sub(blank, text))
        for lineno, line in enumerate(code.split("\n"), 1):
            raw = text.split("\n")[lineno - 1]
            m = INCLUDE.match(raw)
            if m:
                header = m.group(2)
                why = SYSTEM.get(header) or (header.startswith("curl/") and "libcurl: network I/O")
                if m.group(1) == '"' and os.path.basename(header) in io_headers:
                    why = "lib/io/%s, an edge" % os.path.basename(header)
                if why:
                    print("lib/%s:%d: includes %s (%s); policy is pure, I/O goes in lib/io/" % (name, lineno, header, why))
                    bad += 1
                continue
            for fn in CALL.findall(line):
                print("lib/%s:%d: calls %s(): policy gets the time passed in" % (name, lineno, fn))
                bad += 1
    print("lib/{%s}: %d files, %d violations" % (",".join(PURE), len(files), bad))
    return 1 if bad else 0


sys.exit(main())
