package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The packaged proxy on a real NFS stack: libnfs → our proxy → stunnel TLS server → nfs-ganesha.
 * ganesha does not know BindClientToPartition, so every test also covers the unbound fallback.
 */
class ProxyIT {

  static NfsLab lab;

  @BeforeAll
  static void startLab() throws Exception {
    Path dir = Files.createTempDirectory("efs-csi-proxy-it-");
    lab = new NfsLab(dir, 256);
  }

  @AfterAll
  static void stopLab() throws java.io.IOException {
    if (lab != null) {
      lab.closeAndDelete();
    }
  }

  @Test
  void tlsReadOf256MiBIsByteExactAndTheControlSocketReportsIt() throws Exception {
    NfsLab.Proxy p = lab.proxy(Map.of());
    p.awaitListening();
    lab.readExact(p.port());
    assertTrue(p.metric("bytes_to_client") >= 256L * 1024 * 1024);
    assertTrue(
        p.metric("bind_unsupported_total") >= 1, "ganesha answers the bind with PROG_UNAVAIL");
    assertEquals(0, p.metric("tls_handshake_failures_total"));
    assertTrue(
        p.control("status").contains("\"direct_buffers\":\"malloc\""),
        "lib/proxy/jvm.options lets Netty take read buffers from malloc, unzeroed");
    assertTrue(p.control("ping").startsWith("ok "), "NULL ping through TLS to ganesha");
    assertEquals(0, p.stop());
  }

  @Test
  void plainReadOf256MiBIsByteExact() throws Exception {
    NfsLab.Proxy p =
        lab.proxy(Map.of("tls", "false", "upstream.port", Integer.toString(lab.nfsPort)));
    p.awaitListening();
    lab.readExact(p.port());
    assertEquals(0, p.stop());
  }

  @Test
  void severalKernelConnectionsOnOnePortAreServed() throws Exception {
    NfsLab.Proxy p = lab.proxy(Map.of());
    p.awaitListening();
    CompletableFuture<?> a = CompletableFuture.runAsync(() -> read(p.port()));
    CompletableFuture<?> b = CompletableFuture.runAsync(() -> read(p.port()));
    CompletableFuture.allOf(a, b).get(5, TimeUnit.MINUTES);
    assertTrue(p.metric("client_connections_total") >= 2);
    p.stop();
  }

  private static void read(int port) {
    try {
      lab.readExact(port);
    } catch (Exception e) {
      throw new RuntimeException(e);
    }
  }

  @Test
  void wrongServerNameIsRefusedNeverPlaintext() throws Exception {
    assertRefused(Map.of("tls.server-name", "fs-87654321.efs.us-east-1.amazonaws.com"));
  }

  @Test
  void untrustedCaIsRefused() throws Exception {
    lab.selfSigned("other", NfsLab.SERVER_NAME);
    assertRefused(Map.of("tls.ca-file", lab.dir.resolve("other.crt").toString()));
  }

  @Test
  void expiredServerCertificateIsRefused() throws Exception {
    lab.expired("old", NfsLab.SERVER_NAME);
    int port = NfsLab.freePort();
    lab.stunnelServer(port, lab.dir.resolve("old.crt"), lab.dir.resolve("old.key"));
    NfsLab.awaitPort(port, java.time.Duration.ofSeconds(10));
    assertRefused(
        Map.of(
            "upstream.port", Integer.toString(port),
            "tls.ca-file", lab.dir.resolve("old-ca.crt").toString()));
  }

  private static void assertRefused(Map<String, String> conf) throws Exception {
    NfsLab.Proxy p = lab.proxy(conf);
    p.awaitListening();
    NfsLab.Result r = lab.run("nfs-ls", lab.url(p.port(), ""));
    assertNotEquals(0, r.exit(), "the listing must fail: " + r.output());
    assertTrue(p.metric("tls_handshake_failures_total") >= 1);
    assertEquals(0, p.metric("bytes_to_client"), "nothing reached the client");
    assertTrue(p.logText().contains("TLS handshake with 127.0.0.1:"), p.logText());
    assertEquals(0, p.stop());
  }

  @Test
  void aPortThatIsTakenIsReportedWithItsOwnExitCode() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      int port = taken.getLocalPort();
      NfsLab.Proxy p =
          lab.startProxy(
              port,
              Map.of(
                  "listen.port",
                  Integer.toString(port),
                  "upstream.host",
                  "127.0.0.1",
                  "tls",
                  "false",
                  "upstream.port",
                  Integer.toString(lab.nfsPort)));
      assertTrue(p.process().waitFor(20, TimeUnit.SECONDS), "exits at once");
      assertEquals(10, p.process().exitValue(), p.logText());
      assertTrue(p.logText().contains("cannot listen on 127.0.0.1:" + port), p.logText());
    }
  }

  @Test
  void tlsMaterialReloadedMidTransferKeepsTheTransferAndServesNewConnections() throws Exception {
    Path ca = lab.dir.resolve("reload-ca.crt");
    Files.copy(lab.dir.resolve("srv.crt"), ca, StandardCopyOption.REPLACE_EXISTING);
    NfsLab.Proxy p = lab.proxy(Map.of("tls.ca-file", ca.toString()));
    p.awaitListening();
    CompletableFuture<?> transfer = CompletableFuture.runAsync(() -> read(p.port()));
    Thread.sleep(300);
    Files.setLastModifiedTime(ca, FileTime.from(Instant.now().plusSeconds(5)));
    transfer.get(5, TimeUnit.MINUTES);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (p.metric("tls_reloads_total") < 1 && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    assertTrue(p.metric("tls_reloads_total") >= 1, p.logText());
    lab.readExact(p.port());
    assertEquals(0, p.metric("tls_handshake_failures_total"));
    p.stop();
  }
}
