package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.supervisor.state.ProxyRecord;
import io.efscsi.supervisor.upgrade.ProxyBuild;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Rolling proxy upgrades with real processes: a supervisor host started on one build of the proxy
 * ({@code lib/proxy}) launches proxies and is stopped; one started on another build moves them to
 * its own on their ports, one at a time. A poller connects to every port every 20 ms throughout and
 * must never be refused; NFS reads through the port go on across the moves.
 */
class ProxyMoveIT extends SupervisorFixture {

  /** A second build: the same files, one more line in jvm.options (another fingerprint). */
  private Path otherBuild(String marker) throws IOException {
    Path home = dir.resolve("home-" + marker);
    Path from = PackagedDriver.distDir().resolve("lib/proxy");
    Path to = Files.createDirectories(home.resolve("lib/proxy"));
    try (Stream<Path> files = Files.walk(from)) {
      for (Path f : files.toList()) {
        Path t = to.resolve(from.relativize(f).toString());
        if (Files.isDirectory(f)) {
          Files.createDirectories(t);
        } else {
          Files.copy(f, t, StandardCopyOption.COPY_ATTRIBUTES);
        }
      }
    }
    Files.writeString(
        to.resolve("jvm.options"),
        Files.readString(to.resolve("jvm.options")) + "# build " + marker + "\n");
    return home;
  }

  /** Connects to the ports every 20 ms, counting refusals. */
  private static final class Poller implements AutoCloseable {
    final AtomicLong connects = new AtomicLong();
    final AtomicLong refused = new AtomicLong();
    final List<String> failures = new ArrayList<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final Thread thread;

    Poller(int... ports) {
      thread =
          Thread.ofPlatform()
              .daemon()
              .start(() -> {
                while (!stop.get()) {
                  for (int p : ports) {
                    try (Socket s = new Socket()) {
                      s.connect(new InetSocketAddress("127.0.0.1", p), 1000);
                      connects.incrementAndGet();
                    } catch (ConnectException e) {
                      refused.incrementAndGet();
                      synchronized (failures) {
                        failures.add(p + ": " + e.getMessage());
                      }
                    } catch (IOException e) {
                      synchronized (failures) {
                        failures.add(p + ": " + e);
                      }
                    }
                  }
                  try {
                    Thread.sleep(20);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              });
    }

    @Override
    public void close() throws InterruptedException {
      stop.set(true);
      thread.join(5000);
    }
  }

  /** Reads the lab's file through a port again and again, counting whole, exact reads. */
  private static final class Reader implements AutoCloseable {
    final AtomicLong ok = new AtomicLong();
    final List<String> errors = new ArrayList<>();
    private final AtomicBoolean stop = new AtomicBoolean();
    private final Thread thread;

    Reader(int port) {
      thread =
          Thread.ofPlatform()
              .daemon()
              .start(() -> {
                while (!stop.get()) {
                  try {
                    lab.readExact(port);
                    ok.incrementAndGet();
                  } catch (Exception | AssertionError e) {
                    synchronized (errors) {
                      errors.add(String.valueOf(e.getMessage()));
                    }
                  }
                }
              });
    }

    @Override
    public void close() throws InterruptedException {
      stop.set(true);
      thread.join(60_000);
    }
  }

  /**
   * Gone, or a zombie: a proxy whose supervisor host exited is re-parented, and whoever reaps it
   * here may take its time.
   */
  private static boolean ended(long pid) throws IOException {
    Path stat = Path.of("/proc/" + pid + "/stat");
    try {
      String s = Files.readString(stat);
      return s.substring(s.lastIndexOf(')') + 2).startsWith("Z");
    } catch (java.nio.file.NoSuchFileException gone) {
      return true;
    }
  }

  /**
   * libnfs's nfs-cp does not reconnect: the one transfer in flight when the old process ends its
   * connection fails, as it does when a proxy restarts (the kernel's client reconnects and resends:
   * kernel VM scenario 12 counts 0 I/O errors). Never more than that one, never wrong bytes, and
   * every read before and after it whole.
   */
  private static void assertInFlightOnly(Reader reader) {
    assertTrue(
        reader.errors.size() <= 1, () -> "more than the transfer in flight: " + reader.errors);
    for (String e : reader.errors) {
      assertTrue(e.contains("nfs-cp through port") && !e.contains("differ"), e);
    }
    assertTrue(reader.ok.get() > 2, "reads before and after the move");
  }

  private Path proxies() {
    return dir.resolve("proxies");
  }

  private ProxyRecord record(int port) throws IOException {
    return ProxyRecord.fromJson(Files.readString(proxies().resolve("proxy-" + port + ".json")));
  }

  private Map<?, ?> proxyStatus(int port) throws IOException {
    return (Map<?, ?>)
        io.efscsi.proxy.json.Json.parse(
            NfsLab.control(proxies().resolve("proxy-" + port + ".sock").toString(), "status"));
  }

  @Test
  void aProxyOfThePreviousReleaseMovesToThisOneAndThatReleaseStillReadsTheState() throws Exception {
    Path previous = PackagedDriver.previousDistDir();
    Path current = PackagedDriver.distDir();
    String range = freeRange(4);
    Host first = host("--ports", range, "--home", previous.toString());
    int port = first.ensure("fs-prev", lab.nfsPort, "s1");
    writeMountinfo(List.of(port));
    long oldPid = first.status().getFirst().pid();
    assertEquals(null, proxyStatus(port).get("build"), "the previous release's proxy has no build");
    first.quit();

    Poller poller = new Poller(port);
    Reader reader = new Reader(port);
    Host second;
    try (poller;
        reader) {
      Thread.sleep(300);
      second =
          host(
              "--ports",
              range,
              "--home",
              current.toString(),
              "--upgrade",
              "rolling",
              "--upgrade-delay-ms",
              "300");
      await(
          "the proxy moved",
          Duration.ofSeconds(90),
          () -> {
            try {
              return second.stats().contains("moves=1 ");
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
          });
      long okAtMove = reader.ok.get();
      await("a read after the move", Duration.ofSeconds(60), () -> reader.ok.get() > okAtMove);
    }
    System.out.printf(
        "ProxyMoveIT previous->current: %d connects, %d refused; %d reads exact, %d failed %s;"
            + " %s%n",
        poller.connects.get(),
        poller.refused.get(),
        reader.ok.get(),
        reader.errors.size(),
        reader.errors,
        second.stats());
    assertEquals(0, poller.refused.get(), () -> "refused connects: " + poller.failures);
    assertTrue(ended(oldPid), "the previous release's proxy (no drain command) was stopped");
    Host.Status now = second.status().getFirst();
    assertNotEquals(oldPid, now.pid());
    assertEquals(ProxyBuild.of(current.resolve("lib/proxy")), proxyStatus(port).get("build"));
    assertInFlightOnly(reader);
    second.quit();

    // a rollback: the previous release's own reader takes this build's records
    Process status =
        new ProcessBuilder(
                previous.resolve("bin/efs-csi").toString(),
                "status",
                "--json",
                "--state-dir",
                dir.toString(),
                "--mountinfo",
                mountinfo.toString())
            .redirectErrorStream(true)
            .start();
    String out = new String(status.getInputStream().readAllBytes());
    assertEquals(0, status.waitFor(), out);
    assertTrue(out.contains("\"pid\": " + now.pid()) || out.contains("\"pid\":" + now.pid()), out);
    try (Stream<Path> files = Files.list(proxies())) {
      assertEquals(
          List.of(),
          files.map(f -> f.getFileName().toString()).filter(n -> n.contains(".corrupt-")).toList(),
          "the previous release set no record aside");
    }
    Host third = host("--ports", range, "--home", current.toString());
    third.ask("stopall");
  }

  @Test
  void proxiesOfAnotherBuildMoveToThisOneOnTheirPortsWithoutARefusedConnect() throws Exception {
    String range = freeRange(8);
    Path homeA = otherBuild("a");
    Path homeB = otherBuild("b");
    String buildA = ProxyBuild.of(homeA.resolve("lib/proxy"));
    String buildB = ProxyBuild.of(homeB.resolve("lib/proxy"));
    assertNotEquals(buildA, buildB);

    Host first = host("--ports", range, "--home", homeA.toString());
    int a = first.ensure("fs-a", lab.nfsPort, "s1");
    int b = first.ensure("fs-b", lab.nfsPort, "s2");
    writeMountinfo(List.of(a, b));
    List<Host.Status> before = first.status();
    assertEquals(buildA, record(a).proxyBuild());
    assertEquals(buildA, proxyStatus(a).get("build"));
    first.quit(); // the plugin's pod is replaced: its proxies stay

    long t0 = System.nanoTime();
    Host second;
    long movedAfterMs;
    Poller poller = new Poller(a, b);
    Reader reader = new Reader(a);
    try (poller;
        reader) {
      Thread.sleep(500);
      second =
          host(
              "--ports",
              range,
              "--home",
              homeB.toString(),
              "--upgrade",
              "rolling",
              "--upgrade-delay-ms",
              "500",
              "--upgrade-interval-ms",
              "1000");
      await(
          "both proxies moved",
          Duration.ofSeconds(90),
          () -> {
            try {
              return second.stats().contains("moves=2 ");
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
          });
      movedAfterMs = (System.nanoTime() - t0) / 1_000_000;
      long okAtMove = reader.ok.get();
      await("a read after the moves", Duration.ofSeconds(60), () -> reader.ok.get() > okAtMove);
    }
    String stats = second.stats();
    List<Host.Status> after = second.status();
    System.out.printf(
        "ProxyMoveIT: 2 proxies moved in %d ms; %d connects, %d refused; %d reads exact, %d"
            + " failed %s; %s%n",
        movedAfterMs,
        poller.connects.get(),
        poller.refused.get(),
        reader.ok.get(),
        reader.errors.size(),
        reader.errors,
        stats);
    assertEquals(0, poller.refused.get(), () -> "refused connects: " + poller.failures);
    assertTrue(poller.connects.get() > 50, "the poller ran throughout");
    assertTrue(stats.contains("moveFailures=0 moveSkips=0 stale=0"), stats);
    assertTrue(stats.contains("launches=0 restarts=0 adopted=2"), stats);
    for (int i = 0; i < 2; i++) {
      Host.Status was = before.get(i);
      Host.Status now = after.get(i);
      assertEquals(was.port(), now.port(), "same port");
      assertNotEquals(was.pid(), now.pid(), "a new process");
      assertTrue(ended(was.pid()), "the old process is gone");
      assertEquals("RUNNING", now.state());
      ProxyRecord r = record(now.port());
      assertEquals(buildB, r.proxyBuild());
      assertEquals(now.pid(), r.pid());
      assertTrue(r.move().isEmpty(), r::toJson);
      Map<?, ?> st = proxyStatus(now.port());
      assertEquals(buildB, st.get("build"));
      assertEquals("inherited", st.get("listener"));
      assertEquals(Boolean.TRUE, st.get("serving"));
    }
    try (Stream<Path> files = Files.list(proxies())) {
      List<String> left =
          files
              .map(f -> f.getFileName().toString())
              .filter(n -> n.contains(".next.") || n.contains(".corrupt-"))
              .toList();
      assertEquals(List.of(), left, "no successor files or records set aside");
    }
    assertInFlightOnly(reader);
    for (int p : List.of(a, b)) {
      lab.readExact(p);
    }
  }
}
