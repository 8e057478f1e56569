package io.efscsi.supervisor.process;

import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;

/** The host's processes as far as supervision needs them: identity and signals. */
public interface ProcessTable {

  /**
   * The start time (clock ticks since boot) of a live process; empty when there is no such process
   * or it is a zombie. Together with the pid it names one process, immune to pid reuse.
   */
  OptionalLong startTicks(long pid);

  /** True when {@code pid} is alive and is the process that started at {@code startTicks}. */
  default boolean alive(long pid, long startTicks) {
    if (pid <= 0) {
      return false;
    }
    OptionalLong t = startTicks(pid);
    return t.isPresent() && t.getAsLong() == startTicks;
  }

  /**
   * What a live process is doing now, to tell a slow process from a hung one; empty when unknown
   * (then every process looks idle).
   */
  default Optional<Activity> activity(long pid) {
    return Optional.empty();
  }

  /**
   * A sample of one process's work.
   *
   * @param cpuTicks user and system CPU time so far, in clock ticks (100 a second)
   * @param runnableThreads threads running or waiting for a CPU (state R) when sampled
   * @param atNanos when it was sampled ({@link System#nanoTime()})
   */
  record Activity(long cpuTicks, int runnableThreads, long atNanos) {

    /** CPU share (of one CPU) from which a process counts as working: 2 %. */
    static final double WORKING_SHARE = 0.02;

    /**
     * Whether the process worked since {@code before}: it used at least {@link #WORKING_SHARE} of a
     * CPU meanwhile, or a thread of it wants a CPU now. A stopped or deadlocked process does
     * neither (an idle JVM uses well under 1 %); one starved of CPU or busy relaying does one.
     */
    public boolean workedSince(Optional<Activity> before) {
      if (runnableThreads > 0) {
        return true;
      }
      if (before.isEmpty() || atNanos <= before.get().atNanos) {
        return false;
      }
      double cpuMillis = (cpuTicks - before.get().cpuTicks) * 10.0;
      double wallMillis = (atNanos - before.get().atNanos) / 1e6;
      return cpuMillis >= WORKING_SHARE * wallMillis;
    }
  }

  /** Sends SIGTERM ({@code force} false) or SIGKILL to a process. */
  void signal(long pid, boolean force);

  /**
   * SIGTERM, then SIGKILL when the process is still there after {@code grace}; returns whether it
   * had to be killed. Nothing happens to a process that is gone or whose start time differs.
   */
  default boolean terminate(long pid, long startTicks, Duration grace) {
    if (!alive(pid, startTicks)) {
      return false;
    }
    signal(pid, false);
    long deadline = System.nanoTime() + grace.toNanos();
    while (System.nanoTime() < deadline && alive(pid, startTicks)) {
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    if (!alive(pid, startTicks)) {
      return false;
    }
    signal(pid, true);
    return true;
  }
}
