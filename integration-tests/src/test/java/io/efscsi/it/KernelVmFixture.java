package io.efscsi.it;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;

/**
 * What KernelReliabilityIT's scenarios stand on: one boot of the kernel VM for all of them (the run
 * script, certificates and scenarios.sh shared over 9p), each scenario's facts with its log, and
 * the figures table printed and written to target/kernel-vm/figures.txt at the end.
 */
abstract class KernelVmFixture {

  /** Proxy memory limit for the OOM scenario (the production default is 256 MiB). */
  static final int S2_MEMORY_MIB = 96;

  /** Scenario 6: how long the mount target refuses connections, then how long it stalls. */
  static final int S6_REFUSED_S = 150;

  static final int S6_STALLED_S = 150;

  /** Scenario 6: a soft write works again within this long after the target answers again. */
  static final long S6_SOFT_RECOVERY_BOUND_MS = 30_000;

  /**
   * Documented bound for a soft mount with timeo=50,retrans=2 over TCP while the upstream is gone:
   * one call's major timeout is 15 s, and a call fails at it only if the transport is disconnected
   * at that instant (docs/reliability.md, scenario 6). The proxy refuses connections while its
   * upstream is down (ListenerGate), so the transport stays down and the first major timeout fails
   * the call, checked on the kernel's reconnect pace (3 s retry delay, reconnect back-off 3, 6, 12
   * s): at most about 15 + 12 + 3 s. Seen: 18.2 s. Before the proxy refused, EIO came after 1 to 7
   * major timeouts (16 to 106 s).
   */
  static final long SOFT_EIO_BOUND_MS = 45_000;

  /** The NFSv4 lease of the VM's ganesha ({@code Lease_Lifetime} in scenarios.sh). */
  static final long SERVER_LEASE_MS = 120_000;

  /**
   * The soft timeout a call on the orphan may meet: a call in flight when the proxy died is not cut
   * short by the lazy unmount and ends at the soft mount's major timeout, 5 + 10 + 15 = 30 s for
   * timeo=50,retrans=2 (seen: 10–14 s); calls after the unmount return at once.
   */
  static final long STAT_BOUND_MS = 30_000;

  static KernelVm.Run run;
  static final List<String> figures = new ArrayList<>();

  @BeforeAll
  static void bootOnce() throws Exception {
    if (run != null) {
      return; // the suite's classes share one boot (failsafe runs them in one JVM)
    }
    if (bootFailure != null) {
      throw new AssertionError("the kernel VM's one boot failed: " + bootFailure.getMessage());
    }
    String reuse = System.getProperty("efscsi.vm.reuse-out", "");
    if (!reuse.isBlank()) { // judge a finished boot's facts again, without booting
      Path out = Path.of(reuse).toAbsolutePath();
      run = new KernelVm.Run(out, out.resolve("console.log"), Duration.ZERO);
      return;
    }
    try {
      boot();
    } catch (Exception | AssertionError e) {
      bootFailure = e;
      throw e;
    }
  }

  /** Why the one boot failed: the suite's other classes fail with it instead of booting again. */
  static Throwable bootFailure;

  private static void boot() throws Exception {
    // NodeCrashIT runs beside the cluster classes; the VM needs both cores alone
    BesideTheCluster.awaitBesideDone("Kernel*IT");
    Path script = writeRun();
    run =
        KernelVm.boot(
            script.getParent().getParent(), script, script.resolveSibling("out"), timeout());
    System.out.printf(
        "kernel VM: %s, whole boot %d s (console %s)%n",
        run.facts("setup").get("kernel"), run.took().toSeconds(), run.console());
    recordTimes(run);
  }

  /** How long a boot may run, from its start ({@code -Defscsi.vm.timeout-seconds}). */
  static Duration timeout() {
    return Duration.ofSeconds(Long.getLong("efscsi.vm.timeout-seconds", 3000));
  }

  /**
   * Writes the run directory (certificates, scenarios.sh, the test JVMs' jar and AOT caches, the
   * run script), under target/kernel-vm; returns the run script, beside its {@code out/}.
   */
  static Path writeRun() throws Exception {
    Path base = Path.of(System.getProperty("user.dir"), "target", "kernel-vm").toAbsolutePath();
    Path shared = Files.createDirectories(base.resolve("run-" + System.currentTimeMillis()));
    Path out = Files.createDirectories(shared.resolve("out"));
    // the TLS endpoint's certificate, made on the machine (fast) and read inside the VM
    NfsLab.selfSigned(shared, "srv", NfsLab.SERVER_NAME);
    EfsUtilsFiles.vmCertificates(shared);
    // the node's client key as a plugin that started on this node before keeps it (RSA-3072,
    // PKCS#8 PEM): made here in a second, where the VM's first stage took some 45 s to make it
    EfsUtilsFiles.key(shared.resolve("client-key.pem"));
    // efs-utils' own watchdog for scenario 13, run unmodified inside the VM
    Path efsUtils = Files.createDirectories(shared.resolve("efs-utils"));
    EfsUtilsReleases.unpack(efsUtils, "3.2.0");
    Path scenarios = shared.resolve("scenarios.sh");
    Files.write(scenarios, KernelVm.resource("/kernel-vm/scenarios.sh"));
    Path testClasses =
        Path.of(SupervisorHost.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    Path dist = PackagedDriver.distDir().toAbsolutePath();
    long t0 = System.nanoTime();
    VmTestJvms.Made jvms = VmTestJvms.make(shared, testClasses, dist);
    TestTimes.since("AOT caches of the VM's test JVMs", "Kernel*IT", t0, "on the machine");
    Path script = shared.resolve("run.sh");
    Files.writeString(
        script,
        """
        #!/bin/bash
        export OUT='%s' SHARED='%s' JAVA='%s' CP='%s' DIST='%s' DIST_PREV='%s'
        export TEST_JVM_OPTS='%s' AOT_CSI_CLIENT='%s' AOT_SUPERVISOR_HOST='%s'
        export SCENARIOS='%s' SCENARIOS_BESIDE='%s' EFS_UTILS='%s'
        export S2_MEMORY_MIB=%d S6_REFUSED_S=%d S6_STALLED_S=%d
        exec bash '%s'
        """
            .formatted(
                out,
                shared,
                Path.of(System.getProperty("java.home"), "bin", "java"),
                jvms.jar(),
                dist,
                all().contains("12") ? PackagedDriver.previousDistDir().toAbsolutePath() : "",
                String.join(" ", VmTestJvms.OPTIONS),
                jvms.csiClient(),
                jvms.supervisorHost(),
                String.join(" ", lane(0)),
                String.join(" ", lane(1)),
                efsUtils,
                S2_MEMORY_MIB,
                S6_REFUSED_S,
                S6_STALLED_S,
                scenarios),
        StandardCharsets.UTF_8);
    return script;
  }

  /** The boot and each scenario inside it, for scripts/test's time table. */
  static void recordTimes(KernelVm.Run run) throws Exception {
    String boot = "kernel VM boot";
    TestTimes.record(
        boot, "Kernel*IT", run.took().toMillis() / 1e3, "scenarios " + SCENARIOS.trim());
    Map<String, String> setup = run.facts("setup");
    for (String lane : List.of("main", "beside")) {
      String ms = setup.get("lane_" + lane + "_ms");
      if (ms != null) {
        TestTimes.record(
            "kernel VM lane " + lane,
            boot,
            Long.parseLong(ms) / 1e3,
            String.join(" ", lane(lane.equals("main") ? 0 : 1)));
      }
    }
    for (String n : all()) {
      Map<String, String> facts = run.facts("s" + n);
      String ms = facts.get("scenario_ms");
      if (ms != null) {
        TestTimes.record(
            "kernel VM scenario " + n,
            "kernel VM lane " + facts.getOrDefault("scenario_lane", "main"),
            Long.parseLong(ms) / 1e3,
            "");
      }
    }
  }

  @AfterAll
  static void printFigures() throws Exception {
    if (run == null) {
      return;
    }
    StringBuilder sb =
        new StringBuilder(
            "Kernel reliability figures (KernelReliabilityIT, Debian kernel in QEMU/TCG)\n"
                + "| situation | measured here | the Go driver's design |\n|---|---|---|\n");
    figures.stream().sorted().forEach(f -> sb.append(f).append('\n'));
    System.out.print(sb);
    Files.writeString(run.out().getParent().getParent().resolve("figures.txt"), sb);
  }

  /** One row of the figures table: the scenario, what was measured, what the Go driver does. */
  static void figure(String situation, String here, String goDriver) {
    figures.add("| " + situation + " | " + here + " | " + goDriver + " |");
  }

  /**
   * The scenarios this boot runs ({@code -Defscsi.vm.scenarios}, all by default): the main lane's
   * in order, then after a {@code |} the lane beside's, which run at the same time in the same VM
   * on file systems of their own (scenarios.sh, "dispatcher"). Beside: scenario 6, which mostly
   * waits on its 300 s outage (the VM then uses some 15% of the machine's CPU, against 170–195% for
   * the others: their JVM starts, TLS and I/O under emulation, which a second lane would only slow
   * down), then 9, which spends 60 of its 90 s waiting for the lazy unmount of its dead hard mount.
   */
  static final String SCENARIOS =
      System.getProperty("efscsi.vm.scenarios", "1 5 7 4 3 2 8 13 10 11 12 | 6 9");

  /** The scenarios of lane {@code i} (0: main, 1: beside). */
  static List<String> lane(int i) {
    String[] lanes = SCENARIOS.split("\\|", -1);
    return i < lanes.length && !lanes[i].isBlank()
        ? List.of(lanes[i].trim().split("\\s+"))
        : List.of();
  }

  /** Every scenario this boot runs. */
  static List<String> all() {
    List<String> all = new ArrayList<>(lane(0));
    all.addAll(lane(1));
    return all;
  }

  /**
   * The scenario's facts, with its log attached to any failure; a scenario left out of {@code
   * -Defscsi.vm.scenarios} is skipped.
   */
  static Facts facts(String scenario) throws Exception {
    Assumptions.assumeTrue(
        all().contains(scenario.substring(1)),
        scenario + " is not in -Defscsi.vm.scenarios=" + SCENARIOS);
    Facts f = new Facts(scenario, run.facts(scenario), run.log(scenario));
    f.eq("scenario_rc", "0");
    return f;
  }
}
