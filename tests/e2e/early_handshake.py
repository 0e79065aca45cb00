#!/usr/bin/env python3
"""Connections accepted before a certificate reload must still complete their
TLS handshake after it (fault drill 6).

Opens N TCP connections to the webhook without sending a byte, touches
--ready, waits until the webhook's log shows one more "loaded new
certificate" than when it started (the caller rotates the files meanwhile),
then runs the TLS handshake on each (verified against --ca). Prints how many
succeeded; exits 1 if any failed or no reload was seen within --timeout.
"""
import argparse
import socket
import ssl
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument("--port", type=int, required=True)
ap.add_argument("--ca", required=True)
ap.add_argument("--log", required=True, help="the webhook's log file")
ap.add_argument("--ready", required=True, help="file to create once connected")
ap.add_argument("-n", type=int, default=20)
ap.add_argument("--timeout", type=float, default=4.0)
a = ap.parse_args()


def reloads():
    with open(a.log, errors="replace") as f:
        return f.read().count("loaded new certificate")


before = reloads()
socks = [socket.create_connection(("127.0.0.1", a.port), timeout=10) for _ in range(a.n)]
open(a.ready, "w").close()
deadline = time.time() + a.timeout
while reloads() == before:
    if time.time() > deadline:
        print("no certificate reload within %.0fs" % a.timeout)
        sys.exit(1)
    time.sleep(0.05)
ctx = ssl.create_default_context(cafile=a.ca)
ok, failed = 0, []
for s in socks:
    try:
        ctx.wrap_socket(s, server_hostname="localhost").close()
        ok += 1
    except (OSError, ssl.SSLError) as e:
        failed.append(str(e))
print("%d of %d connections accepted before the reload completed their handshake after it%s" %
      (ok, a.n, "; first failure: " + failed[0] if failed else ""))
sys.exit(0 if ok == a.n else 1)
