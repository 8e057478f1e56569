#!/usr/bin/env python3
"""The packaged node plugin (real gRPC over its socket, real supervisor and proxies in front of
nfs-ganesha, real bind mounts; the NFS mount is a tmpfs because this kernel has no NFS client, and
its own time is subtracted). Prints NodeStage and NodePublish medians and, for 100 pods on one
volume, proxies, NFS mounts and resident memory. Runs io.efscsi.it.NodeBench from the test classes.
Usage: benchmarks/node.py [stages]   (after ./mvnw -DskipTests install, as root)"""
import os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfslab import ROOT, test_classpath  # noqa: E402

JAVA = os.path.join(os.environ.get("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64"), "bin", "java")


def run(main_class, args):
    """Runs main_class of integration-tests' test classes against the packaged distribution."""
    dist = os.path.join(ROOT, "dist", "target", "efs-csi")
    return subprocess.run([JAVA, "-Defscsi.dist.dir=" + dist, "-cp", test_classpath(),
                           main_class] + args).returncode


def main():
    sys.exit(run("io.efscsi.it.NodeBench", sys.argv[1:]))


if __name__ == "__main__":
    main()
