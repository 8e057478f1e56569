package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.it.EfsTestServer.Answer;
import io.efscsi.it.EfsTestServer.Conn;
import io.efscsi.it.EfsTestServer.Kind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The packaged proxy against an EFS-side test server ({@link EfsTestServer}: TLS, then
 * BindClientToPartition, then ganesha) on a real NFS stack with libnfs as the client: binding first
 * on every upstream connection, the unbound fallback, RETRY and ERROR answers, and scale-up to more
 * connections on one partition with records spread round-robin, all byte-exact.
 */
class PartitionBindingIT {

  static NfsLab lab;

  @BeforeAll
  static void startLab() throws Exception {
    lab = new NfsLab(Files.createTempDirectory("efs-csi-bind-it-"), 256);
  }

  @AfterAll
  static void stopLab() throws java.io.IOException {
    if (lab != null) {
      lab.closeAndDelete();
    }
  }

  EfsTestServer server(IntFunction<Answer> answers, long bytesPerSecond) throws Exception {
    Path dir = lab.dir;
    return new EfsTestServer(
        dir.resolve("srv.crt"), dir.resolve("srv.key"), lab.nfsPort, answers, bytesPerSecond);
  }

  NfsLab.Proxy proxy(EfsTestServer s, Map<String, String> extra) throws Exception {
    Map<String, String> conf = new HashMap<>(extra);
    conf.put("upstream.port", Integer.toString(s.port()));
    NfsLab.Proxy p = lab.proxy(conf);
    p.awaitListening();
    return p;
  }

  @ParameterizedTest
  @ValueSource(strings = {"awsfile-v3", "efs-v2"})
  void everyUpstreamConnectionBindsFirstThenCarriesTheReadByteExact(String protocol)
      throws Exception {
    try (EfsTestServer s = server(i -> Answer.ready("part-a", 1, 1), 0)) {
      NfsLab.Proxy p = proxy(s, Map.of("bind.protocol", protocol));
      lab.readExact(p.port());
      lab.readExact(p.port());
      boolean v3 = protocol.equals("awsfile-v3");
      assertTrue(s.conns.size() >= 2, "a connection per kernel connection: " + s.conns);
      for (Conn c : s.conns) {
        assertEquals(v3 ? 400123 : 100200, c.firstProgram, c.toString());
        assertEquals(1, c.firstVersion, c.toString());
        assertEquals(v3 ? 2 : 1, c.firstProcedure, c.toString());
        assertEquals(32, c.identifier.length(), "16-byte proxy identifier");
        assertEquals(s.conns.getFirst().identifier, c.identifier, "one identifier per process");
        assertEquals("part-a", c.partition);
      }
      assertTrue(
          carried(s.conns) > 256, "the NFS traffic went through the bound connections: " + s.conns);
      assertEquals(s.conns.size(), s.connectionsOnPartition("part-a"));
      assertTrue(
          p.control("status")
              .contains(
                  "\"partition\":\""
                      + HexFormat.of()
                          .formatHex(Answer.ready("part-a", 1, 1).partitionId())
                          .substring(0, 12)),
          p.control("status"));
      assertEquals(0, p.metric("scale_ups_total"), "the server allows one connection");
      assertEquals(0, p.stop());
    }
  }

  @Test
  void aServerThatDoesNotKnowTheProgramGetsAnUnboundTunnel() throws Exception {
    try (EfsTestServer s = server(i -> Answer.of(Kind.PROG_UNAVAIL), 0)) {
      NfsLab.Proxy p = proxy(s, Map.of());
      lab.readExact(p.port());
      for (Conn c : s.conns) {
        if (c.boundFirst()) {
          assertEquals(0, c.nfsRecords(), "nothing after a refused bind: " + s.conns);
        } else if (c.records.get() > 0) {
          assertEquals(100003, c.firstProgram, "NFS first on a fallback connection");
        }
      }
      assertTrue(carried(s.conns) > 256, s.conns.toString());
      assertTrue(p.metric("bind_unsupported_total") >= 1);
      int before = s.conns.size();
      lab.readExact(p.port());
      List<Conn> later = s.conns.subList(before, s.conns.size());
      assertTrue(carried(later) > 256, later.toString());
      for (Conn c : later) {
        assertTrue(!c.boundFirst(), "the fallback is remembered: " + later);
      }
      assertEquals(0, p.stop());
    }
  }

  private static long carried(List<Conn> conns) {
    return conns.stream().mapToLong(Conn::nfsRecords).sum();
  }

  /** efs-utils takes any answer on the first connection; only READY/PREFERRED give a partition. */
  @ParameterizedTest
  @EnumSource(
      value = Kind.class,
      names = {"RETRY", "RETRY_LATER", "ERROR"})
  void retryOrErrorOnTheFirstConnectionLeavesItUnboundAndNeverScaled(Kind kind) throws Exception {
    try (EfsTestServer s = server(i -> Answer.of(kind), 0)) {
      NfsLab.Proxy p = proxy(s, Map.of("scale-up.threshold-bytes-per-second", "1"));
      lab.readExact(p.port());
      for (Conn c : s.conns) {
        assertTrue(c.boundFirst(), c.toString());
        assertEquals(null, c.partition);
      }
      assertTrue(carried(s.conns) > 256, s.conns.toString());
      assertEquals(0, p.metric("scale_ups_total"), "no partition, no scale-up");
      assertEquals(0, p.metric("bind_unsupported_total"));
      assertEquals(0, p.stop());
    }
  }

  /**
   * The server advertises three connections and a 1 MiB/s threshold and serves each connection at
   * 32 MiB/s, so the read lasts long enough for the proxy to see two seconds over the bar.
   */
  @Test
  void overTheServersThresholdItAddsConnectionsOnThePartitionAndRoundRobinsRecords()
      throws Exception {
    try (EfsTestServer s = server(i -> Answer.ready("part-b", 3, 1 << 20), 32L << 20)) {
      NfsLab.Proxy p = proxy(s, Map.of());
      lab.readExact(p.port());
      assertScaledUp(s, p, 3);
    }
  }

  /** The proxy's own threshold setting replaces the server's 300 MiB/s. */
  @Test
  void theThresholdCanBeSetInTheProxyConfig() throws Exception {
    try (EfsTestServer s = server(i -> Answer.ready("part-c", 2, 300 << 20), 32L << 20)) {
      NfsLab.Proxy p =
          proxy(s, Map.of("scale-up.threshold-bytes-per-second", Integer.toString(1 << 20)));
      lab.readExact(p.port());
      assertScaledUp(s, p, 2);
    }
  }

  private static void assertScaledUp(EfsTestServer s, NfsLab.Proxy p, int expected)
      throws Exception {
    assertEquals(1, p.metric("scale_ups_total"), p.logText());
    Conn busiest = s.conns.stream().max(Comparator.comparingLong(Conn::nfsRecords)).orElseThrow();
    List<Conn> conns = s.ofIncarnation(busiest.incarnation);
    assertEquals(expected, conns.size(), s.conns.toString());
    for (Conn c : conns) {
      assertEquals(busiest.partition, c.partition, "all on one partition");
      assertEquals(busiest.identifier, c.identifier);
      assertTrue(c.nfsRecords() > 10, "each connection carried records: " + conns);
    }
    long[] added = conns.stream().skip(1).mapToLong(Conn::nfsRecords).toArray();
    for (long n : added) {
      assertTrue(Math.abs(n - added[0]) <= 1, "round-robin over the added connections: " + conns);
    }
    assertTrue(conns.getFirst() == busiest, "the first has its share and more: " + conns);
    assertEquals(0, p.stop());
  }

  /**
   * Scale-up attempts the server answers RETRY, PREFERRED or READY on another partition are dropped
   * and tried again (efs-utils' search) until one lands on the tunnel's partition. The server
   * allows two connections, so the search makes one attempt at a time and the order is fixed.
   */
  @Test
  void scaleUpAttemptsAnsweredRetryAreTriedAgainUntilOneLandsOnThePartition() throws Exception {
    IntFunction<Answer> answers =
        i ->
            switch (i) {
              case 0 -> Answer.ready("part-d", 2, 1 << 20);
              case 1 -> Answer.of(Kind.RETRY);
              case 2 -> Answer.of(Kind.PREFERRED);
              case 3 -> Answer.ready("part-x", 2, 1 << 20);
              default -> Answer.ready("part-d", 2, 1 << 20);
            };
    try (EfsTestServer s = server(answers, 32L << 20)) {
      NfsLab.Proxy p = proxy(s, Map.of());
      lab.readExact(p.port());
      assertEquals(1, p.metric("scale_ups_total"), p.logText());
      assertEquals(4, p.metric("scale_up_attempts_total"), p.logText());
      Conn busiest = s.conns.stream().max(Comparator.comparingLong(Conn::nfsRecords)).orElseThrow();
      List<Conn> conns = s.ofIncarnation(busiest.incarnation);
      assertEquals(5, conns.size(), s.conns.toString());
      for (int i = 1; i <= 3; i++) {
        assertEquals(0, conns.get(i).nfsRecords(), "dropped after the bind: " + conns);
      }
      assertEquals("part-d", conns.get(4).partition);
      assertTrue(conns.get(4).nfsRecords() > 10, "the fourth attempt carries records: " + conns);
      assertTrue(conns.getFirst().nfsRecords() > 10, conns.toString());
      assertEquals(0, p.stop());
    }
  }

  /** RETRY_LATER or ERROR on a scale-up attempt ends the search; the transfer goes on. */
  @ParameterizedTest
  @EnumSource(
      value = Kind.class,
      names = {"RETRY_LATER", "ERROR"})
  void retryLaterOrErrorOnAScaleUpAttemptEndsTheSearch(Kind kind) throws Exception {
    IntFunction<Answer> answers =
        i -> i == 1 ? Answer.of(kind) : Answer.ready("part-e", 2, 1 << 20);
    try (EfsTestServer s = server(answers, 32L << 20)) {
      NfsLab.Proxy p = proxy(s, Map.of());
      lab.readExact(p.port());
      assertEquals(1, p.metric("scale_ups_total"), p.logText());
      assertEquals(1, p.metric("scale_up_attempts_total"), p.logText());
      Conn busiest = s.conns.stream().max(Comparator.comparingLong(Conn::nfsRecords)).orElseThrow();
      List<Conn> conns = s.ofIncarnation(busiest.incarnation);
      assertEquals(2, conns.size(), "no attempt after " + kind + ": " + s.conns);
      assertEquals(0, conns.get(1).nfsRecords(), conns.toString());
      assertEquals(0, p.stop());
    }
  }
}
