package io.efscsi.node.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.proxy.json.Json;
import io.efscsi.supervisor.process.ProcessTable;
import io.efscsi.supervisor.state.ProxyRecord;
import io.efscsi.supervisor.status.StateView;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code efs-csi status} on a state dir of 100 proxies whose control sockets are served here: half
 * answer, half hang. It answers within a second, changes nothing, and shows each one.
 */
class NodeStatusTest {

  @TempDir Path state;
  final List<ServerSocketChannel> servers = new ArrayList<>();
  final List<SocketChannel> held = new java.util.concurrent.CopyOnWriteArrayList<>();

  /** Every pid is alive with the recorded start ticks (the records name this test's sockets). */
  static final ProcessTable ALIVE =
      new ProcessTable() {
        @Override
        public OptionalLong startTicks(long pid) {
          return OptionalLong.of(7);
        }

        @Override
        public void signal(long pid, boolean force) {
          throw new AssertionError("status must never signal a process");
        }
      };

  @AfterEach
  void close() throws IOException {
    for (SocketChannel c : held) {
      c.close();
    }
    for (ServerSocketChannel s : servers) {
      s.close();
    }
  }

  void serve(Path socket, boolean answer) throws IOException {
    ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    s.bind(UnixDomainSocketAddress.of(socket));
    servers.add(s);
    Thread.ofVirtual()
        .start(() -> {
          try {
            while (true) {
              SocketChannel c = s.accept();
              held.add(c);
              if (answer) {
                c.read(ByteBuffer.allocate(64));
                c.write(
                    ByteBuffer.wrap(
                        "{\"upstream\":\"10.0.0.9:2049\",\"tls\":\"openssl\",\"bytes_to_client\":42}\n"
                            .getBytes(StandardCharsets.UTF_8)));
              }
            }
          } catch (IOException closed) {
            // the test is over
          }
        });
  }

  void record(int port, boolean answers) throws IOException {
    Path dir = state.resolve("proxies");
    Files.createDirectories(dir);
    String id = "proxy-" + port;
    ProxyRecord r =
        new ProxyRecord(
            id,
            "fs-" + port + "|fsap-0a" + port + "|10.0.0.9:2049|tls",
            port,
            1000 + port,
            7,
            "",
            new TreeMap<>(Map.of("upstream.host", "10.0.0.9", "upstream.port", "2049")),
            Set.of("/staging/" + port),
            port % 3,
            1);
    Files.writeString(dir.resolve(id + ".json"), r.toJson());
    serve(dir.resolve(id + ".sock"), answers);
  }

  static Map<Path, Long> snapshot(Path dir) throws IOException {
    Map<Path, Long> m = new TreeMap<>();
    try (Stream<Path> s = Files.walk(dir)) {
      for (Path p : s.toList()) {
        m.put(p, Files.getLastModifiedTime(p).toMillis());
      }
    }
    return m;
  }

  @Test
  void aHundredProxiesHalfHungAnswerWithinASecondAndNothingChanges() throws Exception {
    for (int i = 0; i < 100; i++) {
      record(20049 + i, i % 2 == 0);
    }
    Files.writeString(state.resolve("proxies/proxy-9.json"), "{ not json"); // a broken record
    Files.writeString(
        state.resolve("proxies/proxy-20049.exit"), "1700000000000 was killed by signal 9\n");
    Path mountinfo = state.resolve("mountinfo");
    Files.writeString(
        mountinfo,
        "22 1 0:21 / / rw shared:1 - ext4 /dev/vda rw\n"
            + "100 22 0:50 / /staging/20049 rw shared:9 - nfs4 127.0.0.1:/ rw,port=20049,addr=127.0.0.1\n"
            + "101 22 0:51 / /var/lib/kubelet/pods/u/volumes/kubernetes.io~csi/pv/mount rw"
            + " shared:9 - nfs4 127.0.0.1:/ rw,port=20049,addr=127.0.0.1\n"
            + "102 22 0:52 / /staging/lost rw shared:9 - nfs4 127.0.0.1:/ rw,port=29999,addr=127.0.0.1\n");
    Map<Path, Long> before = snapshot(state);

    long t0 = System.nanoTime();
    StateView.Report r =
        new StateView(
                state,
                state.resolve("no-cgroupfs"),
                new io.efscsi.supervisor.host.ProcMountTable(mountinfo),
                ALIVE,
                java.time.Duration.ofMillis(500))
            .read();
    long ms = (System.nanoTime() - t0) / 1_000_000;
    System.out.printf("status of 100 proxies (50 hung): %d ms%n", ms);

    assertTrue(ms < 1000, "took " + ms + " ms");
    assertEquals(before, snapshot(state), "status changed the state dir");
    assertEquals(101, r.proxies().size());
    StateView.Proxy first = r.proxies().stream().filter(p -> p.port() == 20049).findFirst().get();
    assertEquals("fs-20049|fsap-0a20049|10.0.0.9:2049|tls", first.key());
    assertEquals("openssl", first.tls());
    assertEquals(42L, first.counters().get("bytes_to_client"));
    assertEquals(
        Set.of("/staging/20049", "/var/lib/kubelet/pods/u/volumes/kubernetes.io~csi/pv/mount"),
        first.mounts());
    assertTrue(first.lastExit().orElseThrow().startsWith("was killed by signal 9 at 2023-11-14T"));
    StateView.Proxy hung = r.proxies().stream().filter(p -> p.port() == 20050).findFirst().get();
    assertTrue(hung.error().orElseThrow().contains("did not answer"), hung.error().toString());
    assertEquals(
        "10.0.0.9:2049", hung.upstream(), "from the record when the proxy does not answer");
    assertTrue(
        r.proxies().stream().anyMatch(p -> p.error().orElse("").contains("unreadable record")));
    assertEquals(
        List.of(new StateView.Orphan(29999, "/staging/lost", "127.0.0.1:/")),
        r.mountsWithoutProxy());

    String table = StatusCommand.table(r);
    assertTrue(table.lines().anyMatch(l -> l.startsWith("20049  fs-20049::fsap-0a20049")), table);
    assertTrue(table.contains("MOUNTS WITHOUT A PROXY"), table);
    Map<?, ?> json = (Map<?, ?>) Json.parse(StatusCommand.json(r));
    assertEquals(101, ((List<?>) json.get("proxies")).size());
    assertEquals(1, ((List<?>) json.get("mountsWithoutProxy")).size());
  }

  @Test
  void badFlagsAndAMissingStateDirAreTold() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream e = new PrintStream(err, true);
    PrintStream o = new PrintStream(new ByteArrayOutputStream(), true);
    assertEquals(2, StatusCommand.run(List.of("--nope"), o, e));
    assertTrue(err.toString().contains("unknown flag '--nope'"), err.toString());
    assertEquals(2, StatusCommand.run(List.of("--timeout-ms", "0"), o, e));
    assertTrue(err.toString().contains("--timeout-ms must be 1-60000, got '0'"), err.toString());
    assertEquals(1, StatusCommand.run(List.of("--state-dir", state.resolve("x").toString()), o, e));
    assertTrue(err.toString().contains("no state dir at " + state.resolve("x/proxies")));
  }

  @Test
  void theStateDirTheChartSetsIsTheDefaultAndTheFlagWins() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream e = new PrintStream(err, true);
    PrintStream o = new PrintStream(new ByteArrayOutputStream(), true);
    Map<String, String> env = Map.of(StatusCommand.STATE_DIR_ENV, state.resolve("env").toString());
    assertEquals(1, StatusCommand.run(List.of(), env, o, e));
    assertTrue(err.toString().contains("no state dir at " + state.resolve("env/proxies")));
    assertEquals(1, StatusCommand.run(List.of("--state-dir=" + state.resolve("flag")), env, o, e));
    assertTrue(err.toString().contains("no state dir at " + state.resolve("flag/proxies")));
  }
}
