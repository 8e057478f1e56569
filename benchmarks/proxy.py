#!/usr/bin/env python3
"""The proxy against its peers, in one run on the same file and server (nfs-ganesha on loopback):
direct NFS, the stunnel client (TLS), our proxy with TLS and plain, and a minimal copy relay (the
limit of one user-space hop, benchmarks/plain_bound.py). Each reads a 256 MiB file with
libnfs (nfs-cp), one path after the other in each of several rounds, byte-compared; prints medians
and ratios, start-to-listening time, private memory idle and under load, PSS of 10 proxies, peak
memory under a 4x larger backlog and under write and read storms against a slow upstream, CPU
seconds per GiB, and the upload direction (1 MiB calls; libnfs 4.0 cannot write over NFSv4).
The TLS server in front of ganesha (the EFS side, the same for stunnel and our proxy) is a Netty
terminator (TlsTerminator.java) by default: stunnel's server, one thread relaying 16 KiB records,
was the bound of the upload direction for both clients (docs/proxy.md, "Measured").
Usage: benchmarks/proxy.py [runs] [netty|stunnel]  (after ./mvnw -DskipTests package)"""
import os, socket, statistics, struct, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfslab import Lab, interleaved, interleaved_reads, smaps  # noqa: E402


def peak_private(pid, work):
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            m = smaps(pid)
            peak[0] = max(peak[0], m.get("Private_Dirty", 0))
            time.sleep(0.02)

    t = threading.Thread(target=sample)
    t.start()
    try:
        work()
    finally:
        done.set()
        t.join()
    return peak[0] / 1024


def parallel_reads(lab, port, n, name="big.bin"):
    threads = [threading.Thread(target=lab.read, args=(port, name)) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def rpc_call(xid, size):
    """An NFS NULL call padded to size bytes, one record: as large as a 1 MiB WRITE, which libnfs
    4.0 cannot send over NFSv4 (it fails to encode the COMPOUND); ganesha answers it."""
    body = struct.pack(">IIIIIIIIII", xid, 0, 2, 100003, 4, 0, 0, 0, 0, 0)
    body += bytes(size - len(body))
    return struct.pack(">I", 0x80000000 | len(body)) + body


def call_storm(port, clients, calls, size=1 << 20):
    """clients connections each send calls records of size bytes as fast as the socket takes them
    and read the replies."""
    def one():
        with socket.create_connection(("127.0.0.1", port)) as s:
            def replies():
                buf, got = b"", 0
                while got < calls:
                    d = s.recv(65536)
                    if not d:
                        raise RuntimeError(f"connection closed after {got} of {calls} replies")
                    buf += d
                    while len(buf) >= 4 and len(buf) >= 4 + (struct.unpack(">I", buf[:4])[0] & 0x7fffffff):
                        buf = buf[4 + (struct.unpack(">I", buf[:4])[0] & 0x7fffffff):]
                        got += 1
            reader = threading.Thread(target=replies)
            reader.start()
            record = rpc_call(1, size)
            for _ in range(calls):
                s.sendall(record)
            reader.join()
    threads = [threading.Thread(target=one) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def interleaved_uploads(paths, runs, calls=256):
    """The upload direction: one client sends calls 1 MiB calls through each path in turn, `runs`
    rounds; per path the median MiB/s and CPU seconds per GiB of its process."""
    for _, port, _ in paths:
        call_storm(port, 1, 16)

    def upload(port):
        t0 = time.monotonic()
        call_storm(port, 1, calls)
        return time.monotonic() - t0

    r = interleaved(paths, runs, upload, calls)
    return {name: (calls / t, cpu) for name, (t, cpu) in r.items()}


def storm(lab, rate, mib):
    """Peak private memory of a TLS proxy whose upstream is slow (a relay limited to rate bytes
    per second in front of the TLS server) while 2, then 8 clients at once send mib 1 MiB calls
    each (a write storm: the kernel's backlog after an outage, or a burst of dirty pages), then
    read mib MiB each: the proxy may hold what it has read, not what is still queued."""
    with open(os.path.join(lab.export, "storm.bin"), "wb") as f:
        f.write(os.urandom(mib << 20))
    _, slow_port = lab.relay(lab.tls_port, rate=rate)
    p, port, _ = lab.proxy(tls=True, upstream_port=slow_port)
    time.sleep(8)
    idle = smaps(p.pid)["Private_Dirty"] / 1024
    peaks = {}
    for n in (2, 8):
        peaks[("write", n)] = peak_private(p.pid, lambda: call_storm(port, n, mib))
    for n in (2, 8):
        peaks[("read", n)] = peak_private(p.pid, lambda: parallel_reads(lab, port, n, "storm.bin"))
    return idle, peaks


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    server = sys.argv[2] if len(sys.argv) > 2 else "netty"
    # A build that just wrote lib/proxy/proxy.aot leaves its pages dirty in the page cache, and
    # smaps counts dirty file pages as Private_Dirty until they are written back: write them now.
    os.sync()
    lab = Lab(256, server)
    try:
        mib = lab.file_mib
        lab.read(lab.nfs_port)  # warm ganesha's page cache
        st, st_port = lab.stunnel_client()
        starts = []
        for _ in range(5):
            p, port, dt = lab.proxy(tls=True)
            starts.append(dt)
            p.terminate()
            p.wait()
        tls_p, tls_port, _ = lab.proxy(tls=True)
        time.sleep(1)
        idle_1s = smaps(tls_p.pid)["Private_Dirty"] / 1024
        # settled: the JVM frees the compiler's pooled arena chunks every 5 s, then the trimmer
        # (-XX:TrimNativeHeapInterval) hands them back to the system
        time.sleep(7)
        idle = smaps(tls_p.pid)
        under_load = peak_private(tls_p.pid, lambda: lab.read(tls_port))
        plain_p, plain_port, _ = lab.proxy(tls=False)
        # the limit of one user-space hop here (benchmarks/plain_bound.py): the plain proxy's peer
        relay_p, relay_port = lab.relay(lab.nfs_port, "copy", 262144)
        # every path read twice before the rounds (the TLS proxy once more while its peak was
        # sampled): the terminator's JIT compiler is done before the first round
        for port in (st_port, st_port, tls_port, plain_port, plain_port, relay_port, relay_port):
            lab.read(port)
        r = interleaved_reads(lab, [("direct", lab.nfs_port, None), ("stunnel", st_port, st.pid),
                                    ("tls", tls_port, tls_p.pid), ("plain", plain_port, plain_p.pid),
                                    ("relay", relay_port, relay_p.pid)],
                              runs)
        direct, _ = r["direct"]
        stunnel, st_cpu = r["stunnel"]
        ours_tls, tls_cpu = r["tls"]
        ours_plain, plain_cpu = r["plain"]
        relay, relay_cpu = r["relay"]
        loaded = smaps(tls_p.pid)
        up = interleaved_uploads([("direct", lab.nfs_port, None), ("stunnel", st_port, st.pid),
                                  ("tls", tls_port, tls_p.pid), ("plain", plain_port, plain_p.pid)], runs)
        idle_private = idle["Private_Dirty"] / 1024
        peak1 = peak_private(tls_p.pid, lambda: parallel_reads(lab, tls_port, 2))
        peak4 = peak_private(tls_p.pid, lambda: parallel_reads(lab, tls_port, 8))
        storm_idle, storm_peaks = storm(lab, 32 << 20, 32)
        fleet = [lab.proxy(tls=True) for _ in range(10)]
        for _, port, _ in fleet:
            lab.read(port)
        time.sleep(2)
        pss = statistics.mean(smaps(p.pid)["Pss"] for p, _, _ in fleet) / 1024
        fleet_private = statistics.mean(smaps(p.pid)["Private_Dirty"] for p, _, _ in fleet) / 1024

        def rate(t):
            return mib / t

        print(f"256 MiB reads with nfs-cp, median of {runs} rounds (each path once per round), same file "
              f"and server ({server} TLS server in front of ganesha), in one run")
        print(f"{'path':<26}{'MiB/s':>8}{'ratio':>9}{'CPU s/GiB':>11}")
        print(f"{'direct (no tunnel)':<26}{rate(direct):>8.0f}{'':>9}")
        print(f"{'stunnel client (TLS)':<26}{rate(stunnel):>8.0f}{'1.00x':>9}{st_cpu:>11.2f}")
        print(f"{'efs-csi proxy (TLS)':<26}{rate(ours_tls):>8.0f}{stunnel / ours_tls:>8.2f}x{tls_cpu:>11.2f}"
              f"   target >= 1.0x stunnel, CPU <= stunnel")
        print(f"{'efs-csi proxy (plain)':<26}{rate(ours_plain):>8.0f}{direct / ours_plain:>8.2f}x{plain_cpu:>11.2f}"
              f"   ratio vs direct")
        print(f"{'minimal relay, copy 256 KiB':<26}{rate(relay):>8.0f}{direct / relay:>8.2f}x{relay_cpu:>11.2f}"
              f"   ratio vs direct")
        print(f"plain proxy vs the minimal copy relay: {relay / ours_plain:.2f}x (target >= 0.97x)")
        print(f"upload direction, one client sending 256 calls of 1 MiB (NFS NULL padded, as WRITEs), median of "
              f"{runs} rounds:")
        print(f"{'direct (no tunnel)':<26}{up['direct'][0]:>8.0f}")
        print(f"{'stunnel client (TLS)':<26}{up['stunnel'][0]:>8.0f}{'1.00x':>9}{up['stunnel'][1]:>11.2f}")
        print(f"{'efs-csi proxy (TLS)':<26}{up['tls'][0]:>8.0f}{up['tls'][0] / up['stunnel'][0]:>8.2f}x"
              f"{up['tls'][1]:>11.2f}")
        print(f"{'efs-csi proxy (plain)':<26}{up['plain'][0]:>8.0f}{up['plain'][0] / up['direct'][0]:>8.2f}x"
              f"{up['plain'][1]:>11.2f}   ratio vs direct")
        print(f"proxy start to listening, median of 5: {statistics.median(starts) * 1000:.0f} ms (target <= 1000)")
        print(f"proxy private memory (Private_Dirty, TLS): idle {idle_private:.1f} MiB 8 s after start "
              f"({idle_1s:.1f} after 1 s) (target <= 24); peak during a read {under_load:.1f} MiB (target <= 40), "
              f"after the reads {loaded['Private_Dirty'] / 1024:.1f} MiB")
        print(f"backlog: peak private with 2 parallel reads {peak1:.1f} MiB, with 8 (4x) {peak4:.1f} MiB "
              f"(target <= idle + 16 = {idle_private + 16:.1f})")
        print(f"storm against an upstream slowed to 32 MiB/s, 32 MiB per client, a fresh TLS proxy: idle "
              f"{storm_idle:.1f} MiB; peak private with 2 clients sending 1 MiB calls "
              f"{storm_peaks[('write', 2)]:.1f}, 8 (4x) {storm_peaks[('write', 8)]:.1f}; 2 clients reading "
              f"{storm_peaks[('read', 2)]:.1f}, 8 (4x) {storm_peaks[('read', 8)]:.1f} MiB "
              f"(target <= idle + 16 = {storm_idle + 16:.1f})")
        print(f"10 proxies after traffic: mean PSS {pss:.1f} MiB (target <= 32), mean Private_Dirty "
              f"{fleet_private:.1f} MiB")
        print(f"stunnel client RSS for reference: {smaps(st.pid)['Rss'] / 1024:.1f} MiB")
    finally:
        lab.close()


if __name__ == "__main__":
    main()
