#!/usr/bin/env python3
"""One proxy's memory and classes, this build against another, in one run: the same loopback lab
(nfs-ganesha behind the Netty TLS terminator), a TLS and a plain proxy of each build started in
turn in every round, one 16 MiB read through each, then left alone for the settle time (the JVM
frees its compiler arenas after 5 s). Prints the medians of private dirty memory, RSS and PSS
(/proc/<pid>/smaps_rollup), start to listening, and the classes loaded (`jcmd VM.classes`), with
the difference. For a lever on the proxy's memory: build, keep a copy of the distribution, change,
build again, run this.
Usage: benchmarks/proxy_memory.py OTHER_DIST [rounds] [settle-seconds]
       (after ./mvnw -DskipTests package; OTHER_DIST is an unpacked distribution, e.g. a copy of
       dist/target/efs-csi made before the change)"""
import os, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfslab import LAUNCHER, Lab, smaps  # noqa: E402

MIB = 1024


def classes(pid):
    out = subprocess.run(["jcmd", str(pid), "VM.classes"], capture_output=True, text=True, check=True).stdout
    # one line per class after the two header lines (the first names the pid)
    return sum(1 for line in out.splitlines()[2:] if line.strip())


def once(lab, launcher, tls, settle):
    p, port, started = lab.proxy(tls=tls, launcher=launcher)
    try:
        lab.read(port, "small.bin")
        time.sleep(settle)
        m = smaps(p.pid)
        return {"private": m["Private_Dirty"] / MIB, "rss": m["Rss"] / MIB, "pss": m["Pss"] / MIB,
                "start": started, "classes": classes(p.pid)}
    finally:
        p.terminate()
        p.wait(timeout=30)


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    other = os.path.join(os.path.abspath(sys.argv[1]), "bin", "efs-csi")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    settle = float(sys.argv[3]) if len(sys.argv) > 3 else 8
    builds = {"other": other, "this": LAUNCHER}
    lab = Lab(file_mib=1, server="netty")
    samples = {}
    try:
        with open(os.path.join(lab.export, "small.bin"), "wb") as f:
            f.write(os.urandom(16 << 20))
        for r in range(rounds):
            for mode in ("tls", "plain"):
                # the order of the two builds turns each round: neither always starts first
                for name in (["other", "this"] if r % 2 == 0 else ["this", "other"]):
                    samples.setdefault((mode, name), []).append(once(lab, builds[name], mode == "tls", settle))
    finally:
        lab.close()
    print(f"proxy memory, {rounds} rounds, {settle:g} s settle; other = {sys.argv[1]}")
    print(f"{'proxy':<7}{'build':<7}{'private MiB':>12}{'RSS MiB':>9}{'PSS MiB':>9}{'start s':>9}{'classes':>9}")
    for mode in ("tls", "plain"):
        med = {}
        for name in ("other", "this"):
            s = samples[(mode, name)]
            med[name] = {k: statistics.median(x[k] for x in s) for k in s[0]}
            m = med[name]
            print(f"{mode:<7}{name:<7}{m['private']:>12.1f}{m['rss']:>9.1f}{m['pss']:>9.1f}{m['start']:>9.2f}"
                  f"{m['classes']:>9.0f}")
        d = {k: med["this"][k] - med["other"][k] for k in med["this"]}
        print(f"{mode:<7}{'change':<7}{d['private']:>+12.1f}{d['rss']:>+9.1f}{d['pss']:>+9.1f}{d['start']:>+9.2f}"
              f"{d['classes']:>+9.0f}")


if __name__ == "__main__":
    main()
