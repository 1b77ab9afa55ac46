#!/usr/bin/env python3
"""Seconds from the start of `bin/cudawatch local` to its line `cudawatch local: running`.

Usage: bench/ready.py TREE RUNS
TREE is a checkout with built jars (this one, or bench/budget's base tree). Each run starts local
in a fresh temporary directory on a free port, with no kernel log and no GPU sampling (nothing on
the machine to read), times the line, then stops local with SIGTERM. Prints one line per run:
`ready_s 7.412`. A run that does not report running within 120 s prints `ready_s never`.
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def one(tree):
    with tempfile.TemporaryDirectory(prefix="cudawatch-ready-") as work:
        cmd = [os.path.join(tree, "bin", "cudawatch"), "local", "--no-kernel-log", "--no-gpu-samples",
               "--logs", os.path.join(work, "logs"), "--data-dir", os.path.join(work, "data"),
               "--http-port", str(free_port())]
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             start_new_session=True)
        ready = []

        def read():
            for line in p.stdout:
                if "cudawatch local: running" in line and not ready:
                    ready.append(time.monotonic() - t0)

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        deadline = t0 + 120
        while not ready and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        try:
            os.killpg(p.pid, signal.SIGTERM)
            p.wait(timeout=60)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        return ready[0] if ready else None


def main():
    tree, runs = sys.argv[1], int(sys.argv[2])
    for _ in range(runs):
        r = one(tree)
        print(f"ready_s {r:.3f}" if r is not None else "ready_s never", flush=True)


if __name__ == "__main__":
    main()
