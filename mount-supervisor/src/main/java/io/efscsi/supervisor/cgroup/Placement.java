package io.efscsi.supervisor.cgroup;

import java.util.List;
import java.util.Map;

/** One proxy's cgroup: how to start a command inside it, its OOM counter, its removal. */
public interface Placement {

  /** The form stored in the state record ({@code kind:where}); parsed back by the placer. */
  String describe();

  /**
   * The command that runs {@code command} inside the group, keeping its pid (exec chain); as it is
   * where there is no group to enter.
   */
  default List<String> wrap(List<String> command) {
    return command;
  }

  /** Environment the wrapped command needs; none by default. */
  default Map<String, String> environment() {
    return Map.of();
  }

  /** How many times the kernel's OOM killer killed a task of this group; -1 when unknown. */
  long oomKills();

  /**
   * The processes in the group now (its cgroup.procs); empty when the group is gone or the adapter
   * has no groups. A group holds one proxy, so any process in it that is not the recorded one was
   * started by a plugin that died before it could record it.
   */
  default List<Long> pids() {
    return List.of();
  }

  /** Memory charged to the group now, in bytes; -1 when unknown. */
  default long memoryCurrent() {
    return -1;
  }

  /** The most memory the group was ever charged, in bytes; -1 when unknown. */
  default long memoryPeak() {
    return -1;
  }

  /** The group's memory limit in bytes; -1 when none or unknown. */
  default long memoryLimit() {
    return -1;
  }

  /** Removes the group once its processes are gone (best effort, logged). */
  void remove();
}
