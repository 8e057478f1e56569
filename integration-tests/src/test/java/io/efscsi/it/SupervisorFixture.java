package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * What SupervisorIT's tests stand on: a real NFS server, a state dir and a simulated kernel mount
 * table per test, supervisor hosts (separate JVMs) started on it and stopped after, free port runs,
 * waits, and {@code efs-csi status} runs on the same state.
 */
abstract class SupervisorFixture {

  static NfsLab lab;
  Path dir;
  Path mountinfo;
  final List<Host> hosts = new ArrayList<>();
  final List<FakeApiServer> apis = new ArrayList<>();

  @BeforeAll
  static void startLab() throws Exception {
    lab = new NfsLab(Files.createTempDirectory("efscsi-supervisor-lab"), 64);
  }

  @AfterAll
  static void stopLab() throws Exception {
    if (lab != null) {
      lab.closeAndDelete();
    }
  }

  @BeforeEach
  void newStateDir() throws IOException {
    dir = Files.createTempDirectory("efscsi-supervisor");
    mountinfo = dir.resolve("mountinfo");
    writeMountinfo(List.of());
  }

  @AfterEach
  void stopHosts() throws Exception {
    for (Host h : hosts) {
      h.close();
    }
    apis.forEach(FakeApiServer::close);
    HostCleanup.deleteTree(dir);
  }

  /** Writes the simulated kernel mount table atomically (a reader never sees half a file). */
  void writeMountinfo(List<Integer> loopbackPorts) throws IOException {
    writeMountinfo(loopbackPorts, List.of());
  }

  /**
   * As {@link #writeMountinfo(List)}, plus a pod's target ({@link FakeApiServer#target}) per port.
   */
  void writeMountinfo(List<Integer> loopbackPorts, List<Integer> published) throws IOException {
    StringBuilder sb = new StringBuilder("22 1 0:21 / / rw shared:1 - ext4 /dev/vda rw\n");
    int id = 100;
    for (int port : published) {
      sb.append(id++)
          .append(" 22 0:")
          .append(id)
          .append(" / ")
          .append(FakeApiServer.target(port))
          .append(" rw,relatime shared:9 - nfs4 127.0.0.1:/ rw,vers=4.1,soft,port=")
          .append(port)
          .append(",addr=127.0.0.1\n");
    }
    for (int port : loopbackPorts) {
      sb.append(id++)
          .append(" 22 0:")
          .append(id)
          .append(" / /var/lib/kubelet/plugins/kubernetes.io/csi/efs.csi.aws.com/v")
          .append(port)
          .append(
              "/globalmount rw,relatime shared:9 - nfs4 127.0.0.1:/ rw,vers=4.1,soft,timeo=150,port=")
          .append(port)
          .append(",addr=127.0.0.1\n");
    }
    Path tmp = dir.resolve("mountinfo.tmp");
    Files.writeString(tmp, sb);
    Files.move(tmp, mountinfo, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  Host host(String... extra) throws Exception {
    List<String> args =
        new ArrayList<>(List.of("--state", dir.toString(), "--mountinfo", mountinfo.toString()));
    args.addAll(List.of(extra));
    Host h = Host.start(dir.resolve("host-" + hosts.size() + ".log"), args.toArray(String[]::new));
    hosts.add(h);
    return h;
  }

  /** A run of free loopback ports. */
  static String freeRange(int n) throws IOException {
    // below the kernel's ephemeral ports, where a listener on port 0 (the plugin's own HTTP
    // endpoint) lands: one there was counted as a proxy's port (NodeCrashIT, seed 6832041100028);
    // and above the chart's default proxy range (20049-21049), which the cluster suite uses
    int ephemeral = ephemeralLow();
    for (int attempt = 0; attempt < 50; attempt++) {
      int base = 22000 + (int) (Math.random() * (ephemeral - 22000 - n));
      boolean ok = true;
      for (int p = base; p < base + n && ok; p++) {
        try (ServerSocket s = new ServerSocket(p, 1, InetAddress.getLoopbackAddress())) {
          s.setReuseAddress(true);
        } catch (IOException busy) {
          ok = false;
        }
      }
      if (ok) {
        return base + "-" + (base + n - 1);
      }
    }
    throw new IOException("no run of " + n + " free ports");
  }

  /** The lowest ephemeral port (ip_local_port_range), 32768 when it cannot be read. */
  static int ephemeralLow() {
    try {
      String range =
          java.nio.file.Files.readString(
              java.nio.file.Path.of("/proc/sys/net/ipv4/ip_local_port_range"));
      int low = Integer.parseInt(range.strip().split("\\s+")[0]);
      return low > 23000 ? low : 32768;
    } catch (IOException | RuntimeException e) {
      return 32768;
    }
  }

  static void await(String what, Duration timeout, BooleanSupplier cond)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!cond.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError(
            "timed out after " + timeout.toSeconds() + " s waiting for " + what);
      }
      Thread.sleep(50);
    }
  }

  /** Waits until the key's proxy runs again as a process other than {@code oldPid}. */
  static void awaitRestarted(Host h, String key, long oldPid, String what, Duration timeout)
      throws InterruptedException {
    await(
        what,
        timeout,
        () -> {
          try {
            Host.Status s = h.status(key);
            return s.state().equals("RUNNING") && s.pid() != oldPid;
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
        });
  }

  static boolean alive(long pid) {
    return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
  }

  /** One run of {@code efs-csi status} on this test's state dir and simulated mount table. */
  record StatusRun(String text, long millis, List<java.util.Map<?, ?>> proxies) {}

  StatusRun status(String... extra) {
    List<String> args =
        new ArrayList<>(
            List.of("--state-dir", dir.toString(), "--mountinfo", mountinfo.toString()));
    args.addAll(List.of(extra));
    var bytes = new java.io.ByteArrayOutputStream();
    var err = new java.io.ByteArrayOutputStream();
    long t0 = System.nanoTime();
    int rc =
        io.efscsi.node.status.StatusCommand.run(
            args, new java.io.PrintStream(bytes, true), new java.io.PrintStream(err, true));
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertEquals(0, rc, err.toString());
    String text = bytes.toString();
    List<java.util.Map<?, ?>> proxies = new ArrayList<>();
    if (args.contains("--json")) {
      var m = (java.util.Map<?, ?>) io.efscsi.proxy.json.Json.parse(text);
      ((List<?>) m.get("proxies")).forEach(p -> proxies.add((java.util.Map<?, ?>) p));
    }
    return new StatusRun(text, ms, proxies);
  }

  void assertServes(int port) throws Exception {
    NfsLab.Result r = lab.run("nfs-ls", lab.url(port, ""));
    assertEquals(0, r.exit(), "NFS through 127.0.0.1:" + port + ": " + r.output());
    assertTrue(r.output().contains("big.bin"), r.output());
  }
}
