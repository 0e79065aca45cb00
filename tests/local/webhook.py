"""Starts build/webhook/raygate-webhook on a free loopback port with fresh
certificates (from build/certs/raygate-certs, as hack/cluster.sh does), for
the tests in tests/local. Python 3 standard library only.

    with Webhook(build, extra_args=["--request-timeout", "3s"]) as wh:
        wh.url("/healthz"), wh.ca, wh.port, wh.alive(), wh.healthy(), wh.status("VmHWM")

RAYGATE_WEBHOOK_VALGRIND=1 runs the webhook under valgrind memcheck (errors
and leaks fail its exit code; valgrind.supp holds h2o's one known leak).
"""
import os
import resource
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request


def say(*args):
    print(*args, flush=True)


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def instrumented():
    """True under ASan or valgrind, where the process's memory says nothing about raygate's."""
    return os.environ.get("RAYGATE_SANITIZED") == "1" or os.environ.get("RAYGATE_WEBHOOK_VALGRIND") == "1"


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Webhook:
    def __init__(self, build, extra_args=(), wrapper=(), nofile_soft=None):
        """nofile_soft: start the webhook with this soft open-file limit (as a container might)."""
        self.build = build
        self.nofile_soft = nofile_soft
        self.dir = tempfile.mkdtemp(prefix="raygate-local-")
        self.ca = os.path.join(self.dir, "ca.crt")
        self.port = free_port()
        self.log = os.path.join(self.dir, "webhook.log")
        certs = os.path.join(build, "certs", "raygate-certs")
        subprocess.run([certs, "generate", "--dir", self.dir, "--dns", "localhost", "--ip", "127.0.0.1"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if not wrapper and os.environ.get("RAYGATE_WEBHOOK_VALGRIND") == "1":
            # The webhook under valgrind memcheck: any error or leak makes it exit 99 (stop() reports the code).
            supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "valgrind.supp")
            wrapper = ["valgrind", "--quiet", "--error-exitcode=99", "--leak-check=full", "--show-leak-kinds=definite,indirect,possible",
                       "--errors-for-leak-kinds=definite,indirect,possible", "--suppressions=" + supp]
        self.args = list(wrapper) + [os.path.join(build, "webhook", "raygate-webhook"),
                                     "--addr", "127.0.0.1:%d" % self.port,
                                     "--cert", os.path.join(self.dir, "tls.crt"),
                                     "--key", os.path.join(self.dir, "tls.key")] + list(extra_args)
        self.proc = None

    def __enter__(self):
        self.logf = open(self.log, "wb")
        def limit():
            if self.nofile_soft is not None:
                hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
                resource.setrlimit(resource.RLIMIT_NOFILE, (min(self.nofile_soft, hard), hard))
        self.proc = subprocess.Popen(self.args, stdout=self.logf, stderr=subprocess.STDOUT, preexec_fn=limit)
        deadline = time.time() + (60 if "valgrind" in self.args[0] else 10)
        while not self.healthy():
            if self.proc.poll() is not None or time.time() > deadline:
                self.dump_log()
                fail("the webhook did not start")
            time.sleep(0.1)
        return self

    def __exit__(self, *exc):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def stop(self, timeout=30):
        """SIGTERM, wait; returns the exit code."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self.dump_log()
                fail("the webhook did not stop within %ds of SIGTERM" % timeout)
        self.logf.close()
        rc = self.proc.returncode
        self.proc = None
        return rc

    def dump_log(self, lines=30):
        try:
            with open(self.log, "rb") as f:
                tail = f.read().decode(errors="replace").splitlines()[-lines:]
            say("--- webhook log (last %d lines):" % lines)
            for line in tail:
                say("    " + line)
        except OSError:
            pass

    def url(self, path):
        return "https://127.0.0.1:%d%s" % (self.port, path)

    def ssl_context(self, alpn=("http/1.1",)):
        ctx = ssl.create_default_context(cafile=self.ca)
        if alpn:
            ctx.set_alpn_protocols(list(alpn))
        return ctx

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def healthy(self, timeout=2):
        try:
            with urllib.request.urlopen(self.url("/healthz"), timeout=timeout, context=self.ssl_context()) as r:
                return r.status == 200 and r.read() == b"ok\n"
        except (OSError, ssl.SSLError):
            return False

    def metric(self, name):
        with urllib.request.urlopen(self.url("/metrics"), timeout=5, context=self.ssl_context()) as r:
            for line in r.read().decode().splitlines():
                if line.startswith(name + " ") or line.startswith(name + "{"):
                    return float(line.rsplit(" ", 1)[1])
        return None

    def status(self, key):
        """A field of /proc/PID/status in kiB (VmRSS, VmHWM)."""
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
        return None
