package io.efscsi.it;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.Properties;
import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * The kernel VM suite's boot, started as the integration tests begin so that it runs while they run
 * (opt-in: {@code -Defscsi.vm.beside}, the integration-tests pom's profile {@code
 * kernel-vm-beside}). The build then runs the other ITs first with {@code efscsi.vm.early=true},
 * then {@link KernelReliabilityIT} and {@link KernelMigrationIT} in a JVM of their own, whose
 * {@link KernelVmFixture} adopts this boot ({@link #adopt}) instead of booting, waits for it and
 * judges its facts. Not the default: the VM is CPU-bound through most scenarios, and its timing
 * bounds stretch under the machine's own load (docs/reliability.md).
 *
 * <p>The handover between the two JVMs is a file, {@code target/kernel-vm/early.properties}: QEMU's
 * pid and start instant (a reused pid is never taken for it), the run directory, and the build it
 * belongs to ({@code efscsi.vm.run}, the Maven run's start), so a file left by an earlier build is
 * never adopted. A boot that failed to start says why there, and the suite fails with it.
 */
public final class KernelVmEarly implements LauncherSessionListener {

  private static Thread starting;

  @Override
  public void launcherSessionOpened(LauncherSession session) {
    synchronized (KernelVmEarly.class) {
      if (!Boolean.getBoolean("efscsi.vm.early") || starting != null) {
        return;
      }
      starting = Thread.ofPlatform().name("kernel-vm-early").start(KernelVmEarly::startBoot);
    }
  }

  /**
   * Surefire opens a session per request; the JVM ends after its last one. The record must be
   * written by then, so that the suite's JVM finds it.
   */
  @Override
  public void launcherSessionClosed(LauncherSession session) {
    Thread t;
    synchronized (KernelVmEarly.class) {
      t = starting;
    }
    if (t != null) {
      try {
        t.join();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static void startBoot() {
    Properties p = new Properties();
    p.setProperty("run", runId());
    try {
      long t0 = System.nanoTime();
      KernelVm.Started s = KernelVmFixture.start();
      TestTimes.since("kernel VM preparation", "Kernel*IT", t0, "started beside the other ITs");
      p.setProperty("pid", Long.toString(s.pid()));
      p.setProperty("processStart", s.processStart().toString());
      p.setProperty("startedEpochMs", Long.toString(s.startedEpochMs()));
      p.setProperty("out", s.out().toString());
      p.setProperty("console", s.console().toString());
      p.setProperty("command", s.command());
    } catch (Exception | AssertionError e) {
      p.setProperty("error", String.valueOf(e));
    }
    try {
      write(p);
    } catch (IOException e) {
      System.err.println("kernel VM: the early boot's record not written: " + e);
    }
  }

  /** This build's id ({@code efscsi.vm.run}); empty outside a build. */
  static String runId() {
    return System.getProperty("efscsi.vm.run", "");
  }

  static Path record() {
    return Path.of(System.getProperty("user.dir"), "target", "kernel-vm", "early.properties")
        .toAbsolutePath();
  }

  private static void write(Properties p) throws IOException {
    Path file = record();
    Files.createDirectories(file.getParent());
    Path tmp = file.resolveSibling("early.properties.tmp");
    try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
      p.store(w, "the kernel VM boot started beside the other ITs (KernelVmEarly)");
    }
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  /**
   * The boot this build started beside the other ITs, or null when it started none (a run of
   * selected classes, or of this suite alone); fails when it could not start.
   */
  static KernelVm.Started adopt() throws IOException {
    Path file = record();
    String run = runId();
    if (run.isBlank() || !Files.exists(file)) {
      return null;
    }
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      p.load(r);
    }
    if (!run.equals(p.getProperty("run"))) {
      return null; // an earlier build's
    }
    if (p.getProperty("error") != null) {
      throw new AssertionError(
          "the kernel VM boot started beside the other ITs failed: " + p.getProperty("error"));
    }
    return new KernelVm.Started(
        Long.parseLong(p.getProperty("pid")),
        Instant.parse(p.getProperty("processStart")),
        Long.parseLong(p.getProperty("startedEpochMs")),
        Path.of(p.getProperty("out")),
        Path.of(p.getProperty("console")),
        p.getProperty("command"));
  }
}
