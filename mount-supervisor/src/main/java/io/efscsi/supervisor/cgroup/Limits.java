package io.efscsi.supervisor.cgroup;

/**
 * Resource limits of one proxy's cgroup.
 *
 * @param memoryBytes memory limit (anonymous + page cache charged to the group); 0 = none
 * @param pids maximum number of tasks (threads count); 0 = none
 */
public record Limits(long memoryBytes, int pids) {

  public Limits {
    if (memoryBytes < 0) {
      throw new IllegalArgumentException("memory limit must be >= 0, got " + memoryBytes);
    }
    if (pids < 0) {
      throw new IllegalArgumentException("pids limit must be >= 0, got " + pids);
    }
  }
}
