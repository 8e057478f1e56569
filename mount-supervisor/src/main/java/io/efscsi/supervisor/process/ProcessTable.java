package io.efscsi.supervisor.process;

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
}
