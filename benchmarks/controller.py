#!/usr/bin/env python3
"""Controller provisioning benchmark: 1000 CreateVolume + DeleteVolume against the EFS emulator.

Runs `bin/efs-csi benchmark-controller [volumes]`: the packaged controller as its own process
(-Xmx128m) on a unix socket, its real AWS SDK client pointed at the EFS emulator on 127.0.0.1,
on a file system that already has 1000 access points. Prints CreateVolume/DeleteVolume p50/p99
(client side, over the socket), EFS API calls per CreateVolume, and the controller's heap after a
full GC once it knows 11000 access points. Targets: p50 <= 20 ms, p99 <= 100 ms, <= 2 calls per
create, heap <= 128 MiB.
Usage: benchmarks/controller.py [volumes]   (after ./mvnw package; wrap in flock on shared hosts)
"""
import os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAUNCHER = os.path.join(ROOT, "dist", "target", "efs-csi", "bin", "efs-csi")

if not os.path.exists(LAUNCHER):
    raise SystemExit("no distribution: run ./mvnw -DskipTests package first")
env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
env["AWS_EC2_METADATA_DISABLED"] = "true"
sys.exit(subprocess.call([LAUNCHER, "benchmark-controller", *sys.argv[1:]], env=env))
