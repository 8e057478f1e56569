package io.efscsi.supervisor.process;

import java.time.Duration;
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
