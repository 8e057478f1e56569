#!/usr/bin/env python3
"""Time to connect to a mount target whose DNS name has one dead address family, before and after
Happy Eyeballs (docs/proxy.md, "Dual-stack"), on loopback: a live listener on ::1 or 127.0.0.1, the
other family a port whose accept queue is full (SYNs dropped: a black hole) or the unroutable
100::1. Names come from a hosts file given to the JDK (-Djdk.net.hosts.file). Prints, per case, the
proxy's connect until now (one attempt at the first address, 10 s timeout; the JDK's IPv4-first
order and IPv6 first), the Happy Eyeballs connect (first and next) and the ratio. Runs
io.efscsi.proxy.dial.DualStackBench from proxy-core's test classes; about 40 s.
Usage: benchmarks/dualstack.py   (after ./mvnw -pl proxy-core test-compile)"""
import os, subprocess, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfslab import ROOT  # noqa: E402

JAVA = os.path.join(os.environ.get("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64"), "bin", "java")


def classpath():
    out = os.path.join(tempfile.gettempdir(), "efs-csi-proxy-core.classpath")
    subprocess.run([os.path.join(ROOT, "mvnw"), "-B", "-q", "-o", "-pl", "proxy-core",
                    "dependency:build-classpath", "-Dmdep.outputFile=" + out,
                    "-Dmdep.includeScope=test"], cwd=ROOT, check=True)
    target = os.path.join(ROOT, "proxy-core", "target")
    with open(out) as f:
        return ":".join([os.path.join(target, "test-classes"), os.path.join(target, "classes"),
                         f.read().strip()])


def main():
    with tempfile.TemporaryDirectory() as tmp:
        hosts = os.path.join(tmp, "hosts")
        with open(hosts, "w") as f:
            f.write("::1 dualstack.test\n127.0.0.1 dualstack.test\n"
                    "100::1 unroutable6.test\n127.0.0.1 unroutable6.test\n")
        sys.exit(subprocess.run([JAVA, "-Djdk.net.hosts.file=" + hosts, "--enable-native-access=ALL-UNNAMED",
                                 "-cp", classpath(), "io.efscsi.proxy.dial.DualStackBench"]).returncode)


if __name__ == "__main__":
    main()
