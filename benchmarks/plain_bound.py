#!/usr/bin/env python3
"""What a second loopback hop costs on this machine, whatever the proxy does: 256 MiB reads with
nfs-cp, direct and through minimal relays (two blocking threads per connection, Python's
os.splice through a pipe, or recv/send with a 256 KiB buffer) and through our plain proxy; prints
MiB/s, the ratio to direct and each relay's CPU seconds per GiB. docs/proxy.md has the figures.
Usage: benchmarks/plain_bound.py [runs]  (after ./mvnw -DskipTests package)"""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfslab import Lab, interleaved_reads  # noqa: E402

def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    lab = Lab(256)
    try:
        lab.read(lab.nfs_port)

        paths = [("direct", lab.nfs_port, None)]
        for mode, size in (("splice", 65536), ("copy", 262144), ("proxy", 0)):
            if mode == "proxy":
                p, port, _ = lab.proxy(tls=False)
                name = "efs-csi proxy (plain)"
            else:
                p, port = lab.relay(lab.nfs_port, mode, size)
                name = f"minimal relay, {mode} {size // 1024} KiB"
            lab.read(port)
            paths.append((name, port, p.pid))
        r = interleaved_reads(lab, paths, runs)
        direct = r["direct"][0]
        print(f"{lab.file_mib} MiB reads with nfs-cp, median of {runs} rounds (each path once per round)")
        print(f"{'path':<34}{'MiB/s':>7}{'ratio':>8}{'CPU s/GiB':>11}")
        for name, (t, cpu) in r.items():
            ratio = f"{direct / t:>7.2f}x" if name != "direct" else f"{'':>8}"
            cpu_text = f"{cpu:>11.2f}" if name != "direct" else ""
            print(f"{name:<34}{lab.file_mib / t:>7.0f}{ratio}{cpu_text}")
    finally:
        lab.close()


if __name__ == "__main__":
    main()
