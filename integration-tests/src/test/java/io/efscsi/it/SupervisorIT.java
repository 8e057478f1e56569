package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The mount supervisor with real proxy processes (the packaged ones), real cgroups and a real NFS
 * server behind them, held by a separate JVM that the tests kill like a crashing node plugin.
 */
class SupervisorIT extends SupervisorFixture {

  @Test
  void aKilledProxyComesBackOnTheSamePort() throws Exception {
    FakeApiServer api = new FakeApiServer();
    apis.add(api);
    Host h = host("--ports", freeRange(4), "--events-api", api.url(), "--node", FakeApiServer.NODE);
    int port = h.ensure("fs-1", lab.nfsPort, "stage-a");
    writeMountinfo(List.of(port), List.of(port)); // the kernel mounted it; a pod uses it
    long pid = h.status("fs-1").pid();
    assertServes(port);

    long t0 = System.nanoTime();
    ProcessHandle.of(pid).orElseThrow().destroyForcibly();
    awaitRestarted(h, "fs-1", pid, "a new proxy on port " + port, Duration.ofSeconds(20));
    long ms = (System.nanoTime() - t0) / 1_000_000;
    Host.Status s = h.status("fs-1");
    assertEquals(port, s.port());
    assertEquals(1, s.restarts());
    assertEquals("was_killed_by_signal_9", s.lastExit());
    assertServes(port);
    System.out.printf("supervisor: kill -9 to serving again on the same port: %d ms%n", ms);

    String labels = "{port=\"" + port + "\",volume=\"fs-1\"}";
    assertEquals(1, h.metric("efs_csi_volume_proxy_restarts_total" + labels));
    assertEquals(1, h.metric("efs_csi_proxy_restarts_total"));
    assertEquals(1, h.metric("efs_csi_volume_proxy_up" + labels));
    assertEquals(0, h.metric("efs_csi_volume_proxy_oom_kills_total" + labels));
    assertTrue(
        h.metric("efs_csi_volume_bytes_to_client_total" + labels) > 0,
        "the listing after the restart went through the new proxy");
    assertEquals(2, h.metric("efs_csi_mounts"), "the staging mount and the pod's");
    assertEquals(1, h.metric("efs_csi_proxy_ports{state=\"in_use\"}"));
    assertEquals(3, h.metric("efs_csi_proxy_ports{state=\"free\"}"));

    StatusRun st = status("--json");
    assertTrue(st.millis() < 1000, "status took " + st.millis() + " ms");
    var proxy = st.proxies().getFirst();
    assertEquals((long) port, proxy.get("port"));
    assertEquals(h.status("fs-1").pid(), proxy.get("pid"));
    assertEquals(true, proxy.get("running"));
    assertEquals(1L, proxy.get("restarts"));
    assertTrue(
        proxy.get("lastExit").toString().startsWith("was killed by signal 9 at "), st.text());
    assertTrue(st.text().contains("globalmount"), st.text());

    // the packaged launcher, as an operator runs it in the node pod
    ProcessBuilder pb =
        new ProcessBuilder(
                PackagedDriver.distDir().resolve("bin/efs-csi").toString(),
                "status",
                "--state-dir",
                dir.toString(),
                "--mountinfo",
                mountinfo.toString())
            .redirectErrorStream(true);
    pb.environment().clear();
    pb.environment().putAll(PackagedDriver.cleanEnv());
    Process p = pb.start();
    String table = new String(p.getInputStream().readAllBytes());
    assertEquals(0, p.waitFor(), table);
    System.out.print("efs-csi status:\n" + table);
    assertTrue(
        table.lines().anyMatch(l -> l.startsWith(port + " ") && l.contains("running")), table);
    assertTrue(table.contains("last exit: was killed by signal 9"), table);

    await(
        "the ProxyRestarted events",
        Duration.ofSeconds(10),
        () -> !api.nodeReasons(port).isEmpty());
    // no NodePublishVolume named the pod: its news is on the Node, naming the PV and the pod uid
    assertEquals(List.of("ProxyRestarted"), api.nodeReasons(port));
    assertEquals(
        List.of("Node"), api.events.stream().map(e -> e.getInvolvedObject().getKind()).toList());
    assertTrue(
        api.events.getFirst().getMessage().contains("was killed by signal 9"),
        api.events.getFirst().getMessage());
  }

  @Test
  void aNewSupervisorAdoptsEveryProxyWithZeroRestartsAndTrafficGoesOn() throws Exception {
    String range = freeRange(8);
    Host first = host("--ports", range);
    int[] ports = {
      first.ensure("fs-a", lab.nfsPort, "s1"),
      first.ensure("fs-b", lab.nfsPort, "s2"),
      first.ensure("fs-c", lab.nfsPort, "s3")
    };
    writeMountinfo(List.of(ports[0], ports[1], ports[2]));
    List<Host.Status> before = first.status();
    CompletableFuture<Duration> transfer =
        CompletableFuture.supplyAsync(() -> {
          try {
            return lab.readExact(ports[0]);
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        });
    Thread.sleep(100);
    first.kill(); // the node plugin is OOM-killed mid-transfer
    for (Host.Status s : before) {
      assertTrue(alive(s.pid()), "proxy " + s.port() + " outlived its supervisor");
    }
    transfer.get(); // byte-exact, not interrupted
    Host second = host("--ports", range);
    List<Host.Status> after = second.status();
    assertEquals(
        before.stream().map(s -> s.key() + s.port() + "/" + s.pid()).toList(),
        after.stream().map(s -> s.key() + s.port() + "/" + s.pid()).toList(),
        "same processes, same ports");
    String stats = second.stats();
    assertTrue(stats.contains("launches=0 restarts=0 adopted=3 adoptionRestarts=0"), stats);
    for (int p : ports) {
      assertServes(p);
    }
    // the adopted proxies are supervised: a killed one comes back on its port
    long pid = after.get(1).pid();
    ProcessHandle.of(pid).orElseThrow().destroyForcibly();
    awaitRestarted(
        second, after.get(1).key(), pid, "adopted proxy restarted", Duration.ofSeconds(20));
    assertServes(after.get(1).port());
  }

  @Test
  void aPortCarriedByAMountIsNeverAllocated() throws Exception {
    String range = freeRange(3);
    int lower = Integer.parseInt(range.split("-")[0]);
    writeMountinfo(List.of(lower, lower + 2)); // e.g. mounts left by another driver
    Host h = host("--ports", range);
    assertEquals(lower + 1, h.ensure("fs-x", lab.nfsPort, "s"));
    String refused = h.ask("ensure fs-y " + lab.nfsPort + " s");
    assertTrue(
        refused.startsWith("error EXCEPTION")
            && refused.contains("1 held by proxies, 2 carried by loopback NFS mounts"),
        refused);
    h.ask("reconcile");
    assertEquals(
        List.of("fs-x"),
        h.status().stream().map(Host.Status::key).toList(),
        "mounts on ports we do not own are left alone");
  }

  @Test
  void anOrphanedMountIsLazilyUnmountedBeforeItsPortIsReused() throws Exception {
    String range = freeRange(1);
    int port = Integer.parseInt(range.split("-")[0]);
    Host h = host("--ports", range, "--reconcile-ms", "300");
    assertEquals(port, h.ensure("fs-o", lab.nfsPort, "stage"));
    writeMountinfo(List.of(port)); // the kernel mounted it
    assertEquals("ok", h.ask("release fs-o stage")); // unstaged, but the unmount did not happen
    long pid = h.status("fs-o").pid();
    assertTrue(alive(pid), "a proxy whose mount remains keeps running");
    assertTrue(h.ask("ensure fs-new " + lab.nfsPort + " s").contains("no free proxy port"));

    ProcessHandle.of(pid).orElseThrow().destroyForcibly(); // proxy gone, mount left: an orphan
    await(
        "the orphan unmounted and the port free",
        Duration.ofSeconds(20),
        () -> {
          try {
            return h.status().isEmpty();
          } catch (InterruptedException e) {
            throw new IllegalStateException(e);
          }
        });
    assertEquals(
        List.of(
            "/var/lib/kubelet/plugins/kubernetes.io/csi/efs.csi.aws.com/v" + port + "/globalmount"),
        Files.readAllLines(dir.resolve("unmounts.log")));
    assertFalse(Files.readString(mountinfo).contains("port=" + port));
    assertTrue(h.stats().contains("orphanUnmounts=1"));
    assertEquals(port, h.ensure("fs-new", lab.nfsPort, "s"), "the port is free again only now");
  }

  @Test
  void aMountMergedOntoAnotherProxysPortIsNeverTakenForAnOrphan() throws Exception {
    Host h = host("--ports", freeRange(4), "--reconcile-ms", "300");
    int a = h.ensure("fs-a", lab.nfsPort, "/stage/a");
    int b = h.ensure("fs-b", lab.nfsPort, "/stage/b");
    // the kernel merged b's mount onto a's client: the line for /stage/b carries port=a
    Files.writeString(
        mountinfo,
        "22 1 0:21 / / rw - ext4 /dev/vda rw\n"
            + "100 22 0:50 / /stage/a rw - nfs4 127.0.0.1:/ rw,port="
            + a
            + ",addr=127.0.0.1\n"
            + "101 22 0:50 / /stage/b rw - nfs4 127.0.0.1:/ rw,port="
            + a
            + ",addr=127.0.0.1\n");
    assertEquals("ok", h.ask("release fs-a /stage/a")); // a's own volume goes, its mount lingers
    long pid = h.status("fs-a").pid();
    ProcessHandle.of(pid).orElseThrow().destroyForcibly();
    awaitRestarted(
        h, "fs-a", pid, "the proxy still carrying b's mount restarted", Duration.ofSeconds(20));
    assertFalse(Files.exists(dir.resolve("unmounts.log")), "nothing unmounted");
    assertEquals(b, h.status("fs-b").port());
  }

  @Test
  void aBindFailureIsReportedAndNothingIsLeftBehind() throws Exception {
    String range = freeRange(1);
    int port = Integer.parseInt(range.split("-")[0]);
    try (ServerSocket squatter = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
      Host h = host("--ports", range, "--probe", "always"); // the probe misses the squatter
      String a = h.ask("ensure fs-b " + lab.nfsPort + " s");
      assertTrue(
          a.startsWith("error BIND_FAILED proxy cannot listen on 127.0.0.1:" + port + " (exit 10)"),
          a);
      assertTrue(h.status().isEmpty());
      try (var files = Files.list(dir.resolve("proxies"))) {
        assertEquals(
            List.of(),
            files.map(f -> f.getFileName().toString()).toList(),
            "no record, config or socket left");
      }
      assertTrue(squatter.isBound());
    }
  }

  /**
   * A mount target that accepts and never answers (a hung or black-holed target): the proxy's pings
   * fail and so does the supervisor's own probe of the target, so this is an outage and the proxy
   * is left up (issue 31: a restart cannot reach the target and would cut the kernel's
   * connections).
   */
  @Test
  void aProxyWhoseTargetHangsIsLeftUpAndTheOutageIsCounted() throws Exception {
    try (ServerSocket blackHole = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      List<java.net.Socket> held = new java.util.concurrent.CopyOnWriteArrayList<>();
      Thread.ofVirtual()
          .start(() -> {
            try {
              while (true) {
                held.add(blackHole.accept()); // accepts, never answers: a hung target
              }
            } catch (IOException closed) {
              // test over
            }
          });
      Host h = host("--ports", freeRange(2), "--health-ms", "400");
      int port = h.ensure("fs-hung", blackHole.getLocalPort(), "s");
      writeMountinfo(List.of(port));
      long pid = h.status("fs-hung").pid();
      await(
          "the outage counted",
          Duration.ofSeconds(30),
          () -> {
            try {
              return h.stats().matches(".* targetOutages=1.*");
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
          });
      Thread.sleep(4_000); // ten more health rounds
      assertEquals(pid, h.status("fs-hung").pid(), "the same process");
      assertEquals(0, h.status("fs-hung").restarts());
      assertTrue(
          h.stats().matches(".* healthRestarts=0 slowRounds=0 targetOutages=1 .*"), h.stats());
      assertTrue(alive(pid));
    }
  }

  /** A proxy that stops answering its control socket (stopped, wedged) is killed and restarted. */
  @Test
  void aProxyThatStopsAnsweringIsRestartedOnItsPort() throws Exception {
    try (ServerSocket upstream = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Host h = host("--ports", freeRange(2), "--health-ms", "400");
      int port = h.ensure("fs-wedged", upstream.getLocalPort(), "s");
      writeMountinfo(List.of(port));
      long pid = h.status("fs-wedged").pid();
      new ProcessBuilder("kill", "-STOP", Long.toString(pid)).start().waitFor();
      awaitRestarted(
          h, "fs-wedged", pid, "the wedged proxy killed and restarted", Duration.ofSeconds(30));
      assertEquals(port, h.status("fs-wedged").port());
      assertTrue(h.status("fs-wedged").restarts() >= 1);
      assertTrue(h.stats().matches(".* healthRestarts=[1-9].*"), h.stats());
      assertTrue(h.stats().matches(".* targetOutages=0 .*"), h.stats());
    }
  }

  /**
   * Sets a v1 memory group's limit to its usage less the page cache the kernel can reclaim (file
   * pages; shmem cannot go without swap), plus 512 KiB: what the proxy cannot give back. A limit
   * below what the kernel can reclaim to is refused (EBUSY): read again and retry.
   */
  private static void squeeze(Path group) throws IOException, InterruptedException {
    IOException last = null;
    for (int i = 0; i < 20; i++) {
      long usage = Long.parseLong(Files.readString(group.resolve("memory.usage_in_bytes")).trim());
      java.util.Map<String, Long> stat = new java.util.HashMap<>();
      for (String l : Files.readAllLines(group.resolve("memory.stat"))) {
        String[] kv = l.split(" ");
        stat.put(kv[0], Long.parseLong(kv[1]));
      }
      long reclaimable = stat.get("total_cache") - stat.getOrDefault("total_shmem", 0L);
      try {
        Files.writeString(
            group.resolve("memory.limit_in_bytes"),
            Long.toString(usage - reclaimable + (512 << 10)));
        return;
      } catch (IOException e) {
        last = e;
        Thread.sleep(50);
      }
    }
    throw new IOException("could not squeeze " + group, last);
  }

  @Test
  void anOomKillInATinyV1CgroupIsReportedAndOnlyThatProxyRestarts() throws Exception {
    Path memRoot = Path.of("/sys/fs/cgroup/memory");
    assertTrue(
        Files.isWritable(memRoot),
        "this suite needs the cgroup v1 memory controller (run as root)");
    String parent = "efs-csi-it-" + ProcessHandle.current().pid();
    FakeApiServer api = new FakeApiServer();
    apis.add(api);
    Host h =
        host(
            "--ports",
            freeRange(4),
            "--cgroup",
            "v1",
            "--cgroup-parent",
            parent,
            "--events-api",
            api.url(),
            "--node",
            FakeApiServer.NODE);
    int small = h.ensure("fs-small", lab.nfsPort, "s");
    int other = h.ensure("fs-other", lab.nfsPort, "s");
    writeMountinfo(List.of(small, other), List.of(small, other));
    long smallPid = h.status("fs-small").pid();
    long otherPid = h.status("fs-other").pid();
    Path group = memRoot.resolve(parent).resolve("proxy-" + small);
    assertEquals(
        List.of(Long.toString(smallPid)), Files.readAllLines(group.resolve("cgroup.procs")));
    assertEquals(
        List.of(Long.toString(otherPid)),
        Files.readAllLines(
            memRoot.resolve(parent).resolve("proxy-" + other).resolve("cgroup.procs")));

    // squeeze the limit to the idle proxy's anonymous memory (its usage also counts page cache,
    // which the kernel reclaims instead of killing: on 6.18 the proxy then never grew past it),
    // then put load through it until it dies; its restart places it with the configured limit again
    squeeze(group);
    java.util.concurrent.atomic.AtomicBoolean stop =
        new java.util.concurrent.atomic.AtomicBoolean();
    List<CompletableFuture<?>> load = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      load.add(
          CompletableFuture.runAsync(() -> {
            while (!stop.get()) {
              try {
                lab.run("nfs-cp", lab.url(small, "big.bin"), "/dev/null");
              } catch (Exception ignored) {
                // the proxy is meant to die under this
              }
            }
          }));
    }
    try {
      await(
          "the OOM kill to be reported",
          Duration.ofSeconds(90),
          () -> {
            try {
              return h.status("fs-small").oom() > 0;
            } catch (InterruptedException e) {
              throw new IllegalStateException(e);
            }
          });
    } finally {
      stop.set(true);
    }
    CompletableFuture.allOf(load.toArray(CompletableFuture[]::new)).exceptionally(t -> null).join();
    Host.Status s = h.status("fs-small");
    assertTrue(s.lastExit().startsWith("was_OOM-killed"), s.lastExit());
    assertTrue(h.stats().contains("oomKills=1"), h.stats());
    awaitRestarted(
        h, "fs-small", smallPid, "the OOM-killed proxy back on its port", Duration.ofSeconds(30));
    assertEquals(small, h.status("fs-small").port());
    assertServes(small);
    String labels = "{port=\"" + small + "\",volume=\"fs-small\"}";
    assertEquals(1, h.metric("efs_csi_volume_proxy_oom_kills_total" + labels));
    assertEquals(1, h.metric("efs_csi_proxy_oom_kills_total"));
    assertEquals(1, h.metric("efs_csi_volume_proxy_restarts_total" + labels));
    assertTrue(h.metric("efs_csi_volume_proxy_memory_bytes" + labels) > 0);
    assertEquals(
        Long.parseLong(Files.readString(group.resolve("memory.limit_in_bytes")).trim()),
        h.metric("efs_csi_volume_proxy_memory_limit_bytes" + labels));
    String otherLabels = "{port=\"" + other + "\",volume=\"fs-other\"}";
    assertEquals(0, h.metric("efs_csi_volume_proxy_oom_kills_total" + otherLabels));
    StatusRun st = status("--json", "--proxy-cgroup-root", "/sys/fs/cgroup");
    var smallRow =
        st.proxies().stream().filter(p -> p.get("port").equals((long) small)).findFirst().get();
    assertEquals(1L, smallRow.get("oomKills"), st.text());
    assertTrue(smallRow.get("lastExit").toString().startsWith("was OOM-killed"), st.text());
    assertEquals("v1:" + parent + "/proxy-" + small, smallRow.get("cgroup"));
    assertTrue((Long) smallRow.get("memoryBytes") > 0, st.text());
    await("the OOM events", Duration.ofSeconds(10), () -> api.nodeReasons(small).size() >= 2);
    assertEquals(List.of("ProxyOOMKilled", "ProxyRestarted"), api.nodeReasons(small));
    assertEquals(List.of(), api.nodeReasons(other), "the other volume saw nothing");
    Host.Status o = h.status("fs-other");
    assertEquals(otherPid, o.pid(), "the other proxy, in its own cgroup, is untouched");
    assertEquals(0, o.restarts());
    assertServes(other);
    h.ask("stopall");
    assertFalse(Files.exists(group), "the cgroup is removed with its proxy");
    Files.deleteIfExists(memRoot.resolve(parent));
    Files.deleteIfExists(Path.of("/sys/fs/cgroup/pids").resolve(parent));
  }
}
