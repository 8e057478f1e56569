package io.efscsi.it;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
    Path base = Path.of(System.getProperty("user.dir"), "target", "kernel-vm").toAbsolutePath();
    Path shared = Files.createDirectories(base.resolve("run-" + System.currentTimeMillis()));
    Path out = Files.createDirectories(shared.resolve("out"));
    // the TLS endpoint's certificate, made on the machine (fast) and read inside the VM
    NfsLab.selfSigned(shared, "srv", NfsLab.SERVER_NAME);
    EfsUtilsFiles.vmCertificates(shared);
    Path scenarios = shared.resolve("scenarios.sh");
    Files.write(scenarios, KernelVm.resource("/kernel-vm/scenarios.sh"));
    Path testClasses =
        Path.of(SupervisorHost.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    Path script = shared.resolve("run.sh");
    Files.writeString(
        script,
        """
        #!/bin/bash
        export OUT='%s' SHARED='%s' JAVA='%s' CP='%s' DIST='%s' DIST_PREV='%s'
        export SCENARIOS='%s' S2_MEMORY_MIB=%d S6_REFUSED_S=%d S6_STALLED_S=%d
        exec bash '%s'
        """
            .formatted(
                out,
                shared,
                Path.of(System.getProperty("java.home"), "bin", "java"),
                testClasses,
                PackagedDriver.distDir().toAbsolutePath(),
                SCENARIOS.contains("12") ? PackagedDriver.previousDistDir().toAbsolutePath() : "",
                SCENARIOS,
                S2_MEMORY_MIB,
                S6_REFUSED_S,
                S6_STALLED_S,
                scenarios),
        StandardCharsets.UTF_8);
    Duration timeout = Duration.ofSeconds(Long.getLong("efscsi.vm.timeout-seconds", 3000));
    run = KernelVm.boot(base, script, out, timeout);
    System.out.printf(
        "kernel VM: %s, whole boot %d s (console %s)%n",
        run.facts("setup").get("kernel"), run.took().toSeconds(), run.console());
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

  /** The scenarios this boot runs ({@code -Defscsi.vm.scenarios}, all by default). */
  static final String SCENARIOS =
      System.getProperty("efscsi.vm.scenarios", "1 5 7 4 3 2 6 8 9 13 10 11 12");

  /**
   * The scenario's facts, with its log attached to any failure; a scenario left out of {@code
   * -Defscsi.vm.scenarios} is skipped.
   */
  static Facts facts(String scenario) throws Exception {
    Assumptions.assumeTrue(
        List.of(SCENARIOS.trim().split("\\s+")).contains(scenario.substring(1)),
        scenario + " is not in -Defscsi.vm.scenarios=" + SCENARIOS);
    Facts f = new Facts(scenario, run.facts(scenario), run.log(scenario));
    f.eq("scenario_rc", "0");
    return f;
  }
}
