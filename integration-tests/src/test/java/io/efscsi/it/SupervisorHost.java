package io.efscsi.it;

import io.efscsi.proxy.config.ProxyConfig;
import io.efscsi.supervisor.PortAllocator;
import io.efscsi.supervisor.ProxySpec;
import io.efscsi.supervisor.ProxyStartException;
import io.efscsi.supervisor.ProxyStatus;
import io.efscsi.supervisor.ProxySupervisor;
import io.efscsi.supervisor.SupervisorConfig;
import io.efscsi.supervisor.SupervisorStats;
import io.efscsi.supervisor.cgroup.CgroupDetector;
import io.efscsi.supervisor.cgroup.Limits;
import io.efscsi.supervisor.host.Children;
import io.efscsi.supervisor.host.CommandMounter;
import io.efscsi.supervisor.host.MountInfoParser;
import io.efscsi.supervisor.host.MountTable;
import io.efscsi.supervisor.host.ProcMountTable;
import io.efscsi.supervisor.host.Unmounter;
import io.efscsi.supervisor.process.JavaProxyLauncher;
import io.efscsi.supervisor.process.ProcProcessTable;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A process that holds a {@link ProxySupervisor} the way the node plugin does, driven by line
 * commands on stdin, so that ITs can kill it with SIGKILL and start another one. The mount table is
 * a file the test writes (a simulated kernel table); "unmounting" removes the line from it and is
 * recorded in unmounts.log. With {@code --mountinfo self} it is the real table and a real umount
 * (the kernel VM suite). {@code ensure <key> <upstreamPort> <user> [key=value …]}: extra proxy
 * config keys, e.g. {@code tls=true tls.ca-file=… tls.server-name=…}.
 */
public final class SupervisorHost {

  private SupervisorHost() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> a = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      a.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    Path state = Path.of(a.get("state"));
    Path mountinfo = Path.of(a.get("mountinfo"));
    String[] range = a.getOrDefault("ports", "20049-21049").split("-");
    Duration health = Duration.ofMillis(Long.parseLong(a.getOrDefault("health-ms", "60000")));
    Duration reconcile = Duration.ofMillis(Long.parseLong(a.getOrDefault("reconcile-ms", "1000")));
    Duration grace = Duration.ofMillis(Long.parseLong(a.getOrDefault("grace-ms", "3000")));
    var config =
        SupervisorConfig.defaults(state)
            .withPorts(Integer.parseInt(range[0]), Integer.parseInt(range[1]))
            .withLimits(new Limits(Long.parseLong(a.getOrDefault("memory", "268435456")), 64))
            .withTimings(reconcile, grace, 3, health);
    if (a.containsKey("upgrade")) { // rolling proxy upgrades: rolling|never, delay, interval
      var upgrades =
          new SupervisorConfig.Upgrades(
              a.get("upgrade").equals("rolling"),
              Duration.ofMillis(Long.parseLong(a.getOrDefault("upgrade-delay-ms", "1000"))),
              Duration.ofMillis(Long.parseLong(a.getOrDefault("upgrade-interval-ms", "1000"))));
      config = config.with(b -> b.upgrades = upgrades);
    } else {
      config =
          config.with(b ->
              b.upgrades =
                  new SupervisorConfig.Upgrades(false, Duration.ZERO, Duration.ofSeconds(1)));
    }
    if (a.containsKey("start-ms")) { // a slow machine (the emulated kernel VM)
      config = withStartTimeout(config, Duration.ofMillis(Long.parseLong(a.get("start-ms"))));
    }
    MountTable table =
        mountinfo.toString().equals("self")
            ? new ProcMountTable(ProcMountTable.SELF)
            : new ProcMountTable(mountinfo);
    Unmounter unmounter =
        mountinfo.toString().equals("self")
            ? new CommandMounter(
                List.of("mount", "-t", "nfs4"), Duration.ofSeconds(10), Duration.ofSeconds(10))
            : mountPoint -> fakeUnmount(mountinfo, state.resolve("unmounts.log"), mountPoint);
    PortAllocator.BindProbe probe =
        a.getOrDefault("probe", "real").equals("always")
            ? p -> true
            : PortAllocator::loopbackBindable;
    ProxySupervisor sup =
        new ProxySupervisor(
            config,
            CgroupDetector.choose(
                a.getOrDefault("cgroup", "none"),
                Path.of(a.getOrDefault("cgroup-root", "/sys/fs/cgroup")),
                a.getOrDefault("cgroup-parent", "efs-csi-it"),
                "systemd-run",
                Path.of("/run/systemd/system")),
            new JavaProxyLauncher(
                JavaProxyLauncher.currentJava(),
                Path.of(a.get("home")),
                "setsid",
                Children.onThisHost()),
            new ProcProcessTable(),
            table,
            unmounter,
            probe,
            Clock.systemUTC(),
            listener(a, table));
    sup.start();
    var registry =
        new io.micrometer.prometheusmetrics.PrometheusMeterRegistry(
            io.micrometer.prometheusmetrics.PrometheusConfig.DEFAULT);
    var volumeMetrics = io.efscsi.node.metrics.SupervisorMetrics.bind(sup, table, registry);
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    out.println("started");
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      String[] w = line.trim().split(" ");
      try {
        switch (w[0]) {
          case "ensure" -> {
            Map<String, String> keys = new HashMap<>();
            keys.put("listen.port", "1");
            keys.put("upstream.host", "127.0.0.1");
            keys.put("upstream.port", w[2]);
            keys.put("tls", "false");
            keys.put("bind.protocol", "none");
            for (int i = 4; i < w.length; i++) {
              int eq = w[i].indexOf('=');
              keys.put(w[i].substring(0, eq), w[i].substring(eq + 1));
            }
            out.println(
                "ok " + sup.ensure(w[1], ProxySpec.of(ProxyConfig.fromMap(keys)), w[3]).port());
          }
          case "release" -> {
            sup.release(w[1], w[2]);
            out.println("ok");
          }
          case "reconcile" -> {
            var report = sup.reconcileNow();
            out.println(
                "ok "
                    + report.decisions()
                    + " mounts="
                    + report.mounts()
                    + " nanos="
                    + report.nanos());
          }
          case "status" -> {
            for (ProxyStatus s : sup.status()) {
              out.println(
                  "proxy "
                      + s.key()
                      + " "
                      + s.port()
                      + " "
                      + s.pid()
                      + " "
                      + s.state()
                      + " "
                      + s.restarts()
                      + " "
                      + s.oomKills()
                      + " "
                      + s.crashLooping()
                      + " "
                      + s.lastExit().orElse("-").replace(' ', '_'));
            }
            out.println("end");
          }
          case "stats" -> out.println("stats " + stats(sup.stats()));
          case "metrics" -> { // the node's /metrics, as the node plugin serves it
            volumeMetrics.refresh();
            registry.scrape().lines().filter(l -> l.startsWith("efs_csi")).forEach(out::println);
            out.println("end");
          }
          case "stopall" -> {
            sup.stopAll();
            out.println("ok");
          }
          case "quit" -> {
            sup.close();
            out.println("ok");
            System.exit(0);
          }
          default -> out.println("error unknown command " + w[0]);
        }
      } catch (ProxyStartException e) {
        out.println("error " + e.reason() + " " + e.getMessage().replace('\n', ' '));
      } catch (Exception e) {
        out.println("error EXCEPTION " + e.toString().replace('\n', ' '));
      }
    }
    sup.close();
  }

  /**
   * With {@code --events-api URL}: the node plugin's proxy events, sent to that API server for node
   * {@code --node} (a fake one in the test).
   */
  static ProxySupervisor.Listener listener(Map<String, String> a, MountTable table) {
    if (!a.containsKey("events-api")) {
      return new ProxySupervisor.Listener() {};
    }
    var client =
        new io.fabric8.kubernetes.client.KubernetesClientBuilder()
            .withConfig(
                new io.fabric8.kubernetes.client.ConfigBuilder()
                    .withMasterUrl(a.get("events-api"))
                    .withRequestRetryBackoffLimit(0)
                    .build())
            .build();
    return new io.efscsi.node.events.ProxyEvents(
        new io.efscsi.node.events.PodEvents(
            new io.efscsi.node.events.KubernetesEventApi(() -> client),
            new io.efscsi.node.events.PublishedPods(),
            a.get("node"),
            Clock.systemUTC()),
        table);
  }

  private static SupervisorConfig withStartTimeout(SupervisorConfig c, Duration start) {
    return c.withStartTimeout(start);
  }

  static String stats(SupervisorStats s) {
    return List.of(
            "launches=" + s.launches.get(),
            "restarts=" + s.restarts.get(),
            "adopted=" + s.adopted.get(),
            "adoptionRestarts=" + s.adoptionRestarts.get(),
            "oomKills=" + s.oomKills.get(),
            "bindFailures=" + s.bindFailures.get(),
            "moves=" + s.proxyMoves.get(),
            "moveFailures=" + s.proxyMoveFailures.get(),
            "moveSkips=" + s.proxyMoveSkips.get(),
            "stale=" + s.staleProxies.get(),
            "healthRestarts=" + s.healthRestarts.get(),
            "slowRounds=" + s.slowRounds.get(),
            "targetOutages=" + s.targetOutages.get(),
            "orphanUnmounts=" + s.orphanUnmounts.get(),
            "stateWrites=" + s.stateWrites.get(),
            "reconcilePasses=" + s.reconcilePasses.get())
        .stream()
        .collect(Collectors.joining(" "));
  }

  private static synchronized void fakeUnmount(Path mountinfo, Path log, Path mountPoint)
      throws java.io.IOException {
    List<String> kept =
        Files.readAllLines(mountinfo).stream()
            .filter(l ->
                l.isBlank()
                    || !MountInfoParser.parseLine(l, 0).mountPoint().equals(mountPoint.toString()))
            .toList();
    Files.write(mountinfo, kept);
    Files.writeString(log, mountPoint + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }
}
