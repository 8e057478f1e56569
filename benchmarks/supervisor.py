#!/usr/bin/env python3
"""The mount supervisor with real proxies (the packaged ones) in front of nfs-ganesha, held by a
separate JVM (integration-tests' SupervisorHost, as the node plugin holds it) with production
timings (reconcile every 5 s, health check every 10 s). Prints:
  - kill -9 of a proxy to its port accepting connections again (median of N kills)
  - one reconcile pass over a 1,000- and a 10,000-entry mount table, with 50 proxies supervised
  - the supervisor's CPU while idle with 50 proxies, and state-record writes while idle
Usage: benchmarks/supervisor.py [kills]   (after ./mvnw -DskipTests install)"""
import os, signal, socket, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfslab import Lab, ROOT, cpu_seconds, smaps, test_classpath  # noqa: E402

JAVA = os.path.join(os.environ.get("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64"), "bin", "java")
DIST = os.path.join(ROOT, "dist", "target", "efs-csi")


class Host:
    def __init__(self, cp, state, mountinfo, ports):
        self.log = open(os.path.join(state, "host.log"), "w")
        self.p = subprocess.Popen(
            [JAVA, "-Xmx128m", "-cp", cp, "io.efscsi.it.SupervisorHost", "--home", DIST,
             "--state", state, "--mountinfo", mountinfo, "--ports", ports,
             "--health-ms", "10000", "--reconcile-ms", "5000", "--grace-ms", "60000"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True, bufsize=1)
        assert self.p.stdout.readline().strip() == "started"

    def ask(self, cmd):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().strip()

    def status(self):
        self.p.stdin.write("status\n")
        self.p.stdin.flush()
        out = {}
        while True:
            line = self.p.stdout.readline().strip()
            if line == "end":
                return out
            f = line.split(" ")
            out[f[1]] = {"port": int(f[2]), "pid": int(f[3]), "state": f[4]}

    def stats(self):
        return dict(kv.split("=") for kv in self.ask("stats").split(" ")[1:])

    def close(self):
        self.ask("stopall")
        self.ask("quit")
        self.p.wait(timeout=30)


def write_mountinfo(path, ports, extra, entries=1000):
    lines = ["22 1 0:21 / / rw shared:1 - ext4 /dev/vda rw"]
    for i, port in enumerate(ports + extra):
        lines.append(f"{100 + i} 22 0:{100 + i} / /var/lib/kubelet/plugins/kubernetes.io/csi/"
                     f"efs.csi.aws.com/v{i}/globalmount rw,relatime shared:9 - nfs4 127.0.0.1:/ "
                     f"rw,vers=4.1,soft,timeo=150,retrans=2,port={port},addr=127.0.0.1")
    while len(lines) < entries:
        n = len(lines)
        lines.append(f"{100 + n} 22 0:{100 + n} / /var/lib/kubelet/pods/p{n}/volumes/"
                     f"kubernetes.io~empty-dir/cache rw,relatime shared:9 - tmpfs tmpfs rw,size=1024k")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, path)


def accepting(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def main():
    kills = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    cp = test_classpath()
    lab = Lab(1)
    state = tempfile.mkdtemp(prefix="efs-csi-sup-")
    mountinfo = os.path.join(state, "mountinfo")
    write_mountinfo(mountinfo, [], [])
    host = Host(cp, state, mountinfo, "42049-43049")
    try:
        # 50 proxies, each with its mount, plus 200 loopback mounts of ports we do not own
        t0 = time.monotonic()
        ports = [int(host.ask(f"ensure fs-{i:03d} {lab.nfs_port} stage-{i}").split(" ")[1])
                 for i in range(50)]
        start_all = time.monotonic() - t0
        write_mountinfo(mountinfo, ports, list(range(43100, 43300)))

        restarts = []
        for k in range(kills):
            key = f"fs-{k % 50:03d}"
            st = host.status()[key]
            t0 = time.monotonic()
            os.kill(st["pid"], signal.SIGKILL)
            while accepting(st["port"]):  # until the old listener is gone
                time.sleep(0.001)
            while not accepting(st["port"]):
                time.sleep(0.005)
            restarts.append(time.monotonic() - t0)
            while host.status()[key]["state"] != "RUNNING":
                time.sleep(0.01)
        passes = {}
        for entries in (1000, 10000):
            write_mountinfo(mountinfo, ports, list(range(43100, 43300)), entries)
            passes[entries] = []
            for _ in range(20):
                r = host.ask("reconcile")
                passes[entries].append(int(r.rsplit("nanos=", 1)[1]) / 1e6)
                assert f"mounts={entries}" in r, r
        write_mountinfo(mountinfo, ports, list(range(43100, 43300)))
        time.sleep(12)  # let every restarted proxy pass a health round before measuring idle
        w0, c0 = int(host.stats()["stateWrites"]), cpu_seconds(host.p.pid)
        idle = 60
        time.sleep(idle)
        w1, c1 = int(host.stats()["stateWrites"]), cpu_seconds(host.p.pid)
        s = host.stats()
        print(f"50 proxies started one after another in {start_all:.1f} s "
              f"({start_all / 50 * 1000:.0f} ms each, ready on their control socket)")
        print(f"kill -9 to listening again on the same port: median {statistics.median(restarts) * 1000:.0f} ms, "
              f"max {max(restarts) * 1000:.0f} ms over {kills} kills (target median <= 1500 ms)")
        for entries, times in passes.items():
            print(f"reconcile pass, {entries}-entry mount table, 50 proxies: median {statistics.median(times):.2f} ms, "
                  f"max {max(times):.2f} ms over {len(times)} passes (target <= 50 ms)")
        print(f"supervisor idle with 50 proxies over {idle} s: {(c1 - c0) / idle * 100:.2f} % of one core, "
              f"{w1 - w0} state-record writes (target: no per-second rewrites)")
        print(f"test host JVM (default flags, -Xmx128m) Private_Dirty {smaps(host.p.pid).get('Private_Dirty', 0) / 1024:.1f}"
              f" MiB (the node plugin's own, with its flags: benchmarks/node.py); "
              f"restarts={s['restarts']} launches={s['launches']}")
        host.close()
    finally:
        if host.p.poll() is None:
            host.p.kill()
        lab.close()


if __name__ == "__main__":
    main()
