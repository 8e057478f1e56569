#!/usr/bin/env python3
"""What a whole node pays: the packaged node plugin and its proxies (TLS, in front of nfs-ganesha
behind the lab's TLS server; the NFS mount itself a tmpfs, this kernel has no NFS client) for 1, 10
and 50 volumes x 1 and 5 pods per volume, PSS summed, beside the Go driver's memory for the same
cells computed from its published per-process figures (upstream #1640). Prints one line per cell
and then the table kept in docs/node.md. Runs io.efscsi.it.NodeMemoryTable from the test classes.
Usage: benchmarks/node_memory.py [settle-seconds]   (after ./mvnw -DskipTests install, as root)"""
import os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from node import run  # noqa: E402


def main():
    sys.exit(run("io.efscsi.it.NodeMemoryTable", sys.argv[1:]))


if __name__ == "__main__":
    main()
