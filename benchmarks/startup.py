#!/usr/bin/env python3
"""Launcher start-to-socket-ready time for `controller` and `node`, median of N runs each.

Measures from fork of bin/efs-csi until its unix socket accepts a connection, with and without
the AOT cache the build writes for each mode (lib/efs-csi-<mode>.aot), in the same run, and prints medians and ratios.
Usage: benchmarks/startup.py [runs]   (after ./mvnw package)
"""
import os, shutil, signal, socket, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIST = os.path.join(ROOT, "dist", "target", "efs-csi")
LAUNCHER = os.path.join(DIST, "bin", "efs-csi")
AOTS = {m: os.path.join(DIST, "lib", f"efs-csi-{m}.aot") for m in ("controller", "node")}


def ready(path):
    if not os.path.exists(path):
        return False
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


def once(mode, tmp):
    sock = os.path.join(tmp, f"{mode}.sock")
    args = [LAUNCHER, mode, f"--endpoint=unix://{sock}"]
    args += ["--region=us-east-1"] if mode == "controller" else [f"--state-dir={tmp}/state"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env["AWS_EC2_METADATA_DISABLED"] = "true"
    t0 = time.monotonic()
    p = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not ready(sock):
            if p.poll() is not None:
                raise SystemExit(f"{mode} exited with {p.returncode} before listening")
            if time.monotonic() - t0 > 30:
                raise SystemExit(f"{mode} not listening after 30 s")
            time.sleep(0.002)
        return time.monotonic() - t0
    finally:
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=30)
        if rc != 0:
            raise SystemExit(f"{mode} exited {rc} after SIGTERM")


TARGET_MS = 500  # issue 17, with the AOT cache


def measure(runs):
    """{(mode, aot): [seconds]} for controller and node, with and without the AOT cache."""
    if not os.path.exists(LAUNCHER):
        raise SystemExit("no distribution: run ./mvnw -DskipTests package first")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("controller", "node"):
            once(mode, tmp)  # warm the page cache once, not counted
            for aot in (True, False):
                if not aot:
                    shutil.move(AOTS[mode], AOTS[mode] + ".off")
                try:
                    results[(mode, aot)] = [once(mode, tmp) for _ in range(runs)]
                finally:
                    if not aot:
                        shutil.move(AOTS[mode] + ".off", AOTS[mode])
    return results


def figures(runs=5):
    """[(figure, ours, peer, target, met)] for benchmarks/all: ms, the peer is the same launcher
    without its AOT cache."""
    out = []
    results = measure(runs)
    for mode in ("controller", "node"):
        w = statistics.median(results[(mode, True)]) * 1000
        wo = statistics.median(results[(mode, False)]) * 1000
        out.append((f"{mode} start to socket, AOT (ms)", w, f"{wo:.0f} without AOT",
                    f"<= {TARGET_MS}", w <= TARGET_MS))
    return out


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    results = measure(runs)
    print(f"launcher start-to-socket-ready, median of {runs} (ms); target <= {TARGET_MS}")
    print(f"{'mode':<11}{'with AOT cache':>16}{'without':>10}{'ratio':>8}   all runs with cache")
    for mode in ("controller", "node"):
        w = statistics.median(results[(mode, True)]) * 1000
        wo = statistics.median(results[(mode, False)]) * 1000
        runs_ms = " ".join(f"{x*1000:.0f}" for x in results[(mode, True)])
        print(f"{mode:<11}{w:>16.0f}{wo:>10.0f}{wo / w:>8.2f}x  {runs_ms}")


if __name__ == "__main__":
    main()
