#!/usr/bin/env python3
"""Resident memory of the packaged plugins, idle, as a node runs them: `bin/efs-csi controller` and
`bin/efs-csi node` (no cgroup for proxies, no volume), each on its own unix socket with its health
and metrics endpoint, asked for Probe-equivalent readiness (the socket) and scraped once on /metrics
as Prometheus would, then left alone for a settle time. Prints RSS, PSS and private dirty memory from
/proc/<pid>/smaps_rollup (median of the runs) and the targets of issue 17. The Go driver's node pod
is reported at ~150 MiB with stunnel (upstream issue #1523, proxies included): that is the only
published peer figure.
Usage: benchmarks/footprint.py [runs] [settle-seconds]   (after ./mvnw -DskipTests package)
       EFS_CSI_DIST=<dir> benchmarks/footprint.py   (another build's distribution)"""
import os, re, signal, socket, statistics, subprocess, sys, tempfile, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfslab import ROOT, smaps  # noqa: E402
from startup import ready as connects  # noqa: E402

# EFS_CSI_DIST: another unpacked distribution, to compare two builds in one run
LAUNCHER = os.path.join(os.environ.get("EFS_CSI_DIST", os.path.join(ROOT, "dist", "target", "efs-csi")),
                        "bin", "efs-csi")
TARGETS = {"controller": 80, "node": 64}  # MiB RSS, issue 17
MIB = 1024


def java_pid(pid):
    """The JVM: the launcher execs it, so it is the launcher's own pid."""
    with open(f"/proc/{pid}/comm") as f:
        assert f.read().strip() == "java", "the launcher did not exec java"
    return pid


def once(mode, tmp, settle):
    sock = os.path.join(tmp, f"{mode}.sock")
    log = os.path.join(tmp, f"{mode}.log")
    args = [LAUNCHER, mode, f"--endpoint=unix://{sock}", "--http-endpoint=127.0.0.1:0"]
    if mode == "controller":
        args += ["--region=us-east-1"]
    else:
        args += [f"--state-dir={tmp}/state", "--proxy-cgroup=none", "--proxy-port-range=45300-45309"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_EC2_METADATA_DISABLED="true", CSI_NODE_NAME="footprint-1", AWS_REGION="us-east-1")
    with open(log, "w") as out:
        p = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=out)
    try:
        t0 = time.monotonic()
        while not connects(sock):
            if p.poll() is not None or time.monotonic() - t0 > 30:
                raise SystemExit(f"{mode} did not listen: {open(log).read()[-2000:]}")
            time.sleep(0.01)
        port = None
        while port is None and time.monotonic() - t0 < 30:
            m = re.search(r"health and metrics on http://127\.0\.0\.1:(\d+)", open(log).read())
            port = m and m.group(1)
            time.sleep(0.05)
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read()
        assert body, "empty /metrics"
        time.sleep(settle)
        m = smaps(java_pid(p.pid))
        return {k: m.get(k, 0) / MIB for k in ("Rss", "Pss", "Private_Dirty")}
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)


def figures(runs=3, settle=10):
    # a freshly built AOT cache is dirty in the page cache until written back, and smaps counts
    # such pages of a file mapping as private dirty: write it back first
    os.sync()
    """[(figure, ours, peer, target, met)] for benchmarks/all."""
    out = []
    # a freshly built AOT cache still dirty in the page cache shows as the plugins' private dirty
    # memory until it is written back: write it back first
    os.sync()
    with tempfile.TemporaryDirectory(prefix="efscsi-footprint") as tmp:
        for mode in ("controller", "node"):
            samples = [once(mode, tmp, settle) for _ in range(runs)]
            med = {k: statistics.median(s[k] for s in samples) for k in samples[0]}
            peer = "Go node pod ~150 MiB (#1523)" if mode == "node" else ""
            out.append((f"{mode} plugin RSS idle (MiB)", med["Rss"], peer, f"<= {TARGETS[mode]}",
                        med["Rss"] <= TARGETS[mode]))
            out.append((f"{mode} plugin PSS idle (MiB)", med["Pss"], "", "", None))
            out.append((f"{mode} plugin private dirty idle (MiB)", med["Private_Dirty"], "", "", None))
    return out


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    settle = float(sys.argv[2]) if len(sys.argv) > 2 else 10
    if not os.path.exists(LAUNCHER):
        raise SystemExit("no distribution: run ./mvnw -DskipTests package first")
    print(f"plugin memory idle, median of {runs} runs, {settle:g} s after the first /metrics scrape")
    for name, ours, peer, target, met in figures(runs, settle):
        verdict = "" if met is None else ("met" if met else "NOT met")
        print(f"  {name:<40}{ours:>8.1f}  {target:<8}{verdict:<8}{peer}")


if __name__ == "__main__":
    main()
