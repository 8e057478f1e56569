#!/usr/bin/env python3
"""What a second loopback hop costs on this machine, whatever the proxy does: 256 MiB reads with
nfs-cp, direct and through minimal relays (two blocking threads per connection, Python's
os.splice through a pipe, or recv/send with a 256 KiB buffer) and through our plain proxy; prints
MiB/s, the ratio to direct and each relay's CPU seconds per GiB. docs/proxy.md has the figures.
Usage: benchmarks/plain_bound.py [runs]  (after ./mvnw -DskipTests package)"""
import fcntl, os, socket, statistics, sys, threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nfslab import Lab, cpu_seconds, free_port, wait_port  # noqa: E402

F_SETPIPE_SZ = 1031


def pump(a, b, mode, size):
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
                b.sendall(view[:n])
    except OSError:
        pass
    finally:
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def relay(listen_port, upstream_port, mode, size):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", listen_port))
    s.listen(16)
    while True:
        c, _ = s.accept()
        u = socket.create_connection(("127.0.0.1", upstream_port))
        for x in (c, u):
            x.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=pump, args=(c, u, mode, size), daemon=True).start()
        threading.Thread(target=pump, args=(u, c, mode, size), daemon=True).start()


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--relay":
        relay(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5]))
        return
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    lab = Lab(256)
    try:
        lab.read(lab.nfs_port)

        def measure(port, pid=None):
            times, cpu = [], 0.0
            for _ in range(runs):
                c0 = cpu_seconds(pid) if pid else 0
                times.append(lab.read(port))
                cpu += (cpu_seconds(pid) - c0) if pid else 0
            return lab.file_mib / statistics.median(times), cpu / (runs * lab.file_mib / 1024)

        direct, _ = measure(lab.nfs_port)
        print(f"{'path':<34}{'MiB/s':>7}{'ratio':>8}{'CPU s/GiB':>11}")
        print(f"{'direct':<34}{direct:>7.0f}")
        for mode, size in (("splice", 65536), ("copy", 262144), ("proxy", 0)):
            if mode == "proxy":
                p, port, _ = lab.proxy(tls=False)
                name = "efs-csi proxy (plain)"
            else:
                port = free_port()
                p = lab.spawn([sys.executable, os.path.abspath(__file__), "--relay", str(port),
                               str(lab.nfs_port), mode, str(size)])
                wait_port(port, p)
                name = f"minimal relay, {mode} {size // 1024} KiB"
            rate, cpu = measure(port, p.pid)
            print(f"{name:<34}{rate:>7.0f}{rate / direct:>7.2f}x{cpu:>11.2f}", flush=True)
            p.terminate()
            p.wait()
        print(f"{'direct again':<34}{measure(lab.nfs_port)[0]:>7.0f}")
    finally:
        lab.close()


if __name__ == "__main__":
    main()
