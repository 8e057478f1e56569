package io.efscsi.supervisor;

import io.efscsi.supervisor.process.ProcessTable;
import java.util.OptionalLong;
import java.util.function.LongPredicate;

/** In-memory process tables for supervisor tests. */
final class FakeProcesses {

  private FakeProcesses() {}

  /** What a signal does to the fake processes. */
  interface Signal {
    void send(long pid, boolean force);
  }

  /**
   * A table in which the processes {@code alive} accepts are alive with start time {@code ticks}
   * (the same for all), and a signal does what {@code signal} says.
   */
  static ProcessTable table(LongPredicate alive, long ticks, Signal signal) {
    return new ProcessTable() {
      @Override
      public OptionalLong startTicks(long pid) {
        return alive.test(pid) ? OptionalLong.of(ticks) : OptionalLong.empty();
      }

      @Override
      public void signal(long pid, boolean force) {
        signal.send(pid, force);
      }
    };
  }
}
