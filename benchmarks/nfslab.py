"""A real NFS stack on loopback for benchmarks: nfs-ganesha (`efs-csi lab`, the project's one
loopback NFS server), an stunnel TLS server in front of it (the EFS side), the stunnel client the
Go driver used before efs-proxy, and our proxy. Needs the packaged distribution and the Debian
packages nfs-ganesha nfs-ganesha-vfs stunnel4 libnfs-utils (scripts/test installs them)."""
import fcntl, json, os, random, shutil, signal, socket, statistics, subprocess, sys, tempfile, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# EFS_CSI_DIST: another unpacked distribution (its proxies, lab and terminator's jars), to measure
# another build with the same benchmark
DIST = os.environ.get("EFS_CSI_DIST", os.path.join(ROOT, "dist", "target", "efs-csi"))
LAUNCHER = os.path.join(DIST, "bin", "efs-csi")
SERVER_NAME = "fs-12345678.efs.us-east-1.amazonaws.com"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, proc=None, timeout=20):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited {proc.returncode} before listening on {port}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return time.monotonic() - t0
        time.sleep(0.005)
    raise RuntimeError(f"nothing listening on {port} after {timeout}s")


class Lab:
    def __init__(self, file_mib=256, server="stunnel"):
        # a freshly built AOT cache is dirty in the page cache until written back, and smaps
        # counts such pages of a file mapping as private dirty: write it back first
        os.sync()
        self.dir = tempfile.mkdtemp(prefix="efs-csi-lab-")
        self.procs = []
        shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
        self.scratch = tempfile.mkdtemp(prefix="efs-csi-lab-", dir=shm) if shm else self.dir
        # the project's one loopback NFS lab (the integration tests' NfsLab start the same;
        # the emulator's mount target and the demo the same ganesha), through the packaged
        # `efs-csi lab`: nfs-ganesha, srv.crt/srv.key for SERVER_NAME and, for stunnel, an stunnel
        # TLS server in front; it prints its facts once it serves and stops when its stdin closes
        self.nfs = subprocess.Popen([LAUNCHER, "lab", self.path("lab")] + (["--tls"] if server == "stunnel" else []),
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=open(self.path("lab.log"), "w"), text=True)
        self.procs.append(self.nfs)
        line = self.nfs.stdout.readline()
        if not line:
            raise RuntimeError(f"efs-csi lab did not start: {open(self.path('lab.log')).read()}")
        facts = json.loads(line)
        assert facts["serverName"] == SERVER_NAME, facts
        self.export = facts["export"]
        self.nfs_port = facts["nfsPort"]
        self.cert, self.key = facts["cert"], facts["key"]
        self.file_mib = file_mib
        with open(os.path.join(self.export, "big.bin"), "wb") as f:
            for _ in range(file_mib):
                f.write(os.urandom(1 << 20))
        if server == "netty":
            self.tls_port = free_port()
            self.tls_server = self.netty_terminator()
            wait_port(self.tls_port)
        else:
            self.tls_port = facts["tlsPort"]

    def path(self, name):
        return os.path.join(self.dir, name)

    def url(self, port, name="big.bin"):
        return f"nfs://127.0.0.1/export/{name}?version=4&nfsport={port}"

    def spawn(self, args, log=None, env=None):
        out = open(log, "w") if log else subprocess.DEVNULL
        p = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env)
        self.procs.append(p)
        return p

    def stunnel(self, name, section):
        conf = self.path(f"stunnel-{name}.conf")
        with open(conf, "w") as f:
            f.write(f"foreground = yes\npid =\n[efs]\n{section}")
        return self.spawn(["stunnel", conf], log=self.path(f"stunnel-{name}.log"))

    def netty_terminator(self):
        """The EFS side on Netty and BoringSSL (TlsTerminator.java, run from source with the
        distribution's proxy jars): a TLS server that is not itself the bound (see docs/proxy.md)."""
        lib = os.path.join(DIST, "lib", "proxy")
        java = os.path.join(os.environ.get("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64"), "bin", "java")
        return self.spawn([java, "-XX:+UseSerialGC", "-Xmx64m", "-XX:MaxDirectMemorySize=256m",
                           f"-Djava.library.path={lib}/native", "--enable-native-access=ALL-UNNAMED",
                           "--sun-misc-unsafe-memory-access=allow", "--add-opens=java.base/java.nio=ALL-UNNAMED",
                           "-Dio.netty.tryReflectionSetAccessible=true", "-Dio.netty.allocator.type=unpooled",
                           "-cp", os.path.join(lib, "*"),
                           os.path.join(ROOT, "benchmarks", "TlsTerminator.java"), str(self.tls_port),
                           str(self.nfs_port), self.cert, self.key],
                          log=self.path("tls-server.log"))

    def stunnel_client(self):
        port = free_port()
        p = self.stunnel(f"client-{port}", f"""client = yes
accept = 127.0.0.1:{port}
connect = 127.0.0.1:{self.tls_port}
CAfile = {self.cert}
verify = 2
checkHost = {SERVER_NAME}
sslVersion = TLSv1.2
""")
        wait_port(port, p)
        return p, port

    def proxy(self, tls=True, port=None, upstream_port=None, extra=None, env=None, launcher=None):
        port = port or free_port()
        conf = self.path(f"proxy-{port}.conf")
        lines = {"listen.port": port, "upstream.host": "127.0.0.1",
                 "upstream.port": upstream_port or (self.tls_port if tls else self.nfs_port),
                 "tls": str(tls).lower(), "tls.server-name": SERVER_NAME,
                 "tls.ca-file": self.cert,
                 "control.socket": self.path(f"proxy-{port}.sock")}
        lines.update(extra or {})
        with open(conf, "w") as f:
            f.writelines(f"{k}={v}\n" for k, v in lines.items())
        t0 = time.monotonic()
        p = self.spawn([launcher or LAUNCHER, "proxy", "--config", conf], log=self.path(f"proxy-{port}.log"),
                       env=env)
        wait_port(port, p)
        return p, port, time.monotonic() - t0

    def relay(self, upstream_port, mode="copy", size=262144, rate=0):
        """A minimal relay (this file's relay()) in its own process in front of upstream_port."""
        port = free_port()
        p = self.spawn([sys.executable, os.path.abspath(__file__), "--relay", str(port),
                        str(upstream_port), mode, str(size), str(rate)])
        wait_port(port, p)
        return p, port

    def read(self, port, name="big.bin"):
        # nfs-cp's copy goes to memory (tmpfs) when it can: a copy on disk makes the page cache's
        # writeback part of the measurement, and a random part of it
        out = os.path.join(self.scratch, f"out-{port}-{time.monotonic_ns()}.bin")
        t0 = time.monotonic()
        r = subprocess.run(["nfs-cp", self.url(port, name), out], capture_output=True, text=True)
        dt = time.monotonic() - t0
        if r.returncode != 0:
            raise RuntimeError(f"nfs-cp through {port} failed: {r.stdout}{r.stderr}")
        same = filecmp(out, os.path.join(self.export, name))
        os.remove(out)
        if not same:
            raise RuntimeError(f"bytes read through {port} differ from the file")
        return dt

    def close(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.rmtree(self.scratch, ignore_errors=True)


def filecmp(a, b):
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 20), fb.read(1 << 20)
            if x != y:
                return False
            if not x:
                return True


def smaps(pid):
    """The smaps_rollup fields (Rss, Pss, Private_Dirty, ...) in KiB."""
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2 and parts[0].endswith(":"):
                try:
                    out[parts[0][:-1]] = int(parts[1])
                except ValueError:
                    pass
    return out


def interleaved(paths, runs, work, mib):
    """Runs work(port), which moves mib MiB and returns its seconds, through each path in turn,
    `runs` rounds, so that the machine's drift (it is shared) falls on every path alike; each
    round in its own order (shuffled, seeded by the round), so that no path always runs right after
    the same one (the path after the stunnel client measured up to 17% slower than an identical
    proxy elsewhere in the round); per path the median seconds and CPU seconds per GiB of its
    process (pid None: not counted)."""
    times = {name: [] for name, _, _ in paths}
    cpu = {name: 0.0 for name, _, _ in paths}
    for r in range(runs):
        order = list(paths)
        random.Random(r).shuffle(order)
        for name, port, pid in order:
            c0 = cpu_seconds(pid) if pid else 0
            times[name].append(work(port))
            cpu[name] += (cpu_seconds(pid) - c0) if pid else 0
    gib = runs * mib / 1024
    return {name: (statistics.median(times[name]), cpu[name] / gib) for name in times}


def interleaved_reads(lab, paths, runs):
    """The big file read through each path in turn (interleaved())."""
    return interleaved(paths, runs, lab.read, lab.file_mib)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def test_classpath():
    """integration-tests' test classes and their test-scope dependencies (for Java benchmark mains)."""
    out = os.path.join(tempfile.gettempdir(), "efs-csi-it.classpath")
    subprocess.run([os.path.join(ROOT, "mvnw"), "-B", "-q", "-o", "-pl", "integration-tests",
                    "dependency:build-classpath", "-Dmdep.outputFile=" + out,
                    "-Dmdep.includeScope=test"], cwd=ROOT, check=True)
    with open(out) as f:
        return os.path.join(ROOT, "integration-tests", "target", "test-classes") + ":" + f.read().strip()


F_SETPIPE_SZ = 1031


class Bucket:
    """A rate limit shared by every pump of a relay: a slow upstream (0 = none)."""

    def __init__(self, rate):
        self.rate = rate
        self.lock = threading.Lock()
        self.next = time.monotonic()

    def take(self, n):
        if not self.rate:
            return
        with self.lock:
            now = time.monotonic()
            self.next = max(self.next, now) + n / self.rate
            wait = self.next - now
        if wait > 0:
            time.sleep(wait)


def pump(a, b, mode, size, bucket):
    try:
        if mode == "splice":
            r, w = os.pipe()
            fcntl.fcntl(w, F_SETPIPE_SZ, size)
            while True:
                n = os.splice(a.fileno(), w, size, flags=os.SPLICE_F_MOVE)
                if n == 0:
                    break
                while n:  # no SPLICE_F_MORE: it corks the socket and stalls request/reply traffic
                    n -= os.splice(r, b.fileno(), n, flags=os.SPLICE_F_MOVE)
        else:
            buf = bytearray(size)
            view = memoryview(buf)
            while True:
                n = a.recv_into(buf)
                if n == 0:
                    break
                bucket.take(n)
                b.sendall(view[:n])
    except OSError:
        pass
    finally:
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def relay(listen_port, upstream_port, mode, size, rate=0):
    """A minimal relay: two blocking threads per connection, splice through a pipe or recv/send;
    with a rate, recv/send only, at most that many bytes per second in all."""
    bucket = Bucket(rate)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", listen_port))
    s.listen(16)
    while True:
        c, _ = s.accept()
        u = socket.create_connection(("127.0.0.1", upstream_port))
        for x in (c, u):
            x.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=pump, args=(c, u, mode, size, bucket), daemon=True).start()
        threading.Thread(target=pump, args=(u, c, mode, size, bucket), daemon=True).start()


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "--relay":
    relay(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), float(sys.argv[6]))
