package io.efscsi.supervisor.cgroup;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A transient systemd scope per proxy: {@code systemd-run --scope} moves itself into a new scope
 * unit with MemoryMax and TasksMax and then execs the proxy (same pid). The host's systemd owns the
 * group, so it lives outside the plugin container. OOM kills are read from the scope's
 * memory.events when the unified hierarchy is visible under {@code cgroupRoot}.
 */
public final class SystemdScopePlacer implements CgroupPlacer {

  private final String systemdRun;
  private final String slice;
  private final Path cgroupRoot;

  /**
   * @param systemdRun the systemd-run binary
   * @param slice the slice to put scopes in ({@code efs-csi.slice}); empty = systemd's default
   * @param cgroupRoot where the unified cgroup hierarchy is mounted, for OOM counters
   */
  public SystemdScopePlacer(String systemdRun, String slice, Path cgroupRoot) {
    if (!slice.isEmpty() && !slice.matches("[A-Za-z0-9_.-]+\\.slice")) {
      throw new IllegalArgumentException(
          "systemd slice must look like name.slice, got '" + slice + "'");
    }
    this.systemdRun = systemdRun;
    this.slice = slice;
    this.cgroupRoot = cgroupRoot;
  }

  @Override
  public String kind() {
    return "systemd";
  }

  @Override
  public Placement place(String name, Limits limits) {
    CgroupFiles.checkName("scope name", name);
    // A fresh unit per launch: a scope name cannot be reused until systemd has collected it.
    String unit = "efs-csi-" + name + "-" + Long.toString(System.nanoTime() & 0xffffffffL, 36);
    return new Scope(unit, limits);
  }

  @Override
  public Placement existing(String described) {
    return new Scope(CgroupPlacer.where(described), new Limits(0, 0));
  }

  private final class Scope implements Placement {
    private final String unit;
    private final Limits limits;

    Scope(String unit, Limits limits) {
      this.unit = unit;
      this.limits = limits;
    }

    @Override
    public String describe() {
      return "systemd:" + unit;
    }

    @Override
    public List<String> wrap(List<String> command) {
      List<String> out = new ArrayList<>(List.of(systemdRun, "--scope", "--quiet", "--collect"));
      out.add("--unit=" + unit);
      if (!slice.isEmpty()) {
        out.add("--slice=" + slice);
      }
      if (limits.memoryBytes() > 0) {
        out.add("--property=MemoryMax=" + limits.memoryBytes());
        out.add("--property=MemorySwapMax=0");
        out.add("--property=OOMPolicy=kill");
      }
      if (limits.pids() > 0) {
        out.add("--property=TasksMax=" + limits.pids());
      }
      out.add("--");
      out.addAll(command);
      return out;
    }

    @Override
    public Map<String, String> environment() {
      return Map.of();
    }

    private java.nio.file.Path scopeDir() {
      String sliceDir = slice.isEmpty() ? "system.slice" : slice;
      return cgroupRoot.resolve(sliceDir).resolve(unit + ".scope");
    }

    @Override
    public long oomKills() {
      return CgroupFiles.keyed(scopeDir().resolve("memory.events"), "oom_kill");
    }

    @Override
    public List<Long> pids() {
      return CgroupFiles.pids(scopeDir().resolve("cgroup.procs"));
    }

    @Override
    public void remove() {
      // --collect: systemd removes the scope when its last process exits.
    }
  }
}
