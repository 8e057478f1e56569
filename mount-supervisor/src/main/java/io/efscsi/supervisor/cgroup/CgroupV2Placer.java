package io.efscsi.supervisor.cgroup;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * cgroup v2: one group per proxy under {@code <root>/<parent>}, a parent outside the plugin
 * container's own cgroup (with a private cgroup namespace a child of the container's group would
 * die with it and be charged to its limit). Limits: memory.max, memory.swap.max=0, pids.max;
 * memory.oom.group=1 so an OOM kill takes the whole proxy; OOM kills read from memory.events.
 */
public final class CgroupV2Placer implements CgroupPlacer {

  private final Path root;
  private final String parent;

  public CgroupV2Placer(Path root, String parent) {
    CgroupFiles.checkName("cgroup parent", parent);
    this.root = root;
    this.parent = parent;
  }

  @Override
  public String kind() {
    return "v2";
  }

  @Override
  public Placement place(String name, Limits limits) throws IOException {
    CgroupFiles.checkName("cgroup name", name);
    Path parentDir = root.resolve(parent);
    Files.createDirectories(parentDir);
    enableControllers(parentDir);
    Path dir = parentDir.resolve(name);
    Files.createDirectories(dir);
    if (limits.memoryBytes() > 0) {
      CgroupFiles.write(dir.resolve("memory.max"), Long.toString(limits.memoryBytes()));
      CgroupFiles.writeIfPresent(dir.resolve("memory.swap.max"), "0");
      CgroupFiles.writeIfPresent(dir.resolve("memory.oom.group"), "1");
    }
    if (limits.pids() > 0) {
      CgroupFiles.write(dir.resolve("pids.max"), Integer.toString(limits.pids()));
    }
    return new Group(dir);
  }

  /** Enables memory and pids for children at every level from the root down to the parent. */
  private void enableControllers(Path parentDir) throws IOException {
    List<Path> levels = new ArrayList<>();
    for (Path p = parentDir; p != null && p.startsWith(root); p = p.getParent()) {
      levels.addFirst(p);
    }
    for (Path level : levels) {
      Path control = level.resolve("cgroup.subtree_control");
      Path available = level.resolve("cgroup.controllers");
      if (!Files.exists(control)) {
        continue;
      }
      String have =
          Files.exists(available) ? Files.readString(available, StandardCharsets.US_ASCII) : "";
      StringBuilder want = new StringBuilder();
      for (String c : List.of("memory", "pids")) {
        if (List.of(have.trim().split("\\s+")).contains(c)) {
          want.append(want.isEmpty() ? "" : " ").append('+').append(c);
        }
      }
      if (!want.isEmpty()) {
        CgroupFiles.write(control, want.toString());
      }
    }
  }

  @Override
  public Placement existing(String described) {
    return new Group(root.resolve(CgroupPlacer.where(described)));
  }

  private final class Group implements Placement {
    private final Path dir;

    Group(Path dir) {
      this.dir = dir;
    }

    @Override
    public String describe() {
      return "v2:" + root.relativize(dir);
    }

    @Override
    public List<String> wrap(List<String> command) {
      return CgroupFiles.wrapWithScript(command);
    }

    @Override
    public Map<String, String> environment() {
      return Map.of("EFSCSI_CGROUP_PROCS", dir.resolve("cgroup.procs").toString());
    }

    @Override
    public long oomKills() {
      return CgroupFiles.keyed(dir.resolve("memory.events"), "oom_kill");
    }

    @Override
    public List<Long> pids() {
      return CgroupFiles.pids(dir.resolve("cgroup.procs"));
    }

    @Override
    public long memoryCurrent() {
      return CgroupFiles.single(dir.resolve("memory.current"));
    }

    @Override
    public long memoryPeak() {
      return CgroupFiles.single(dir.resolve("memory.peak"));
    }

    @Override
    public long memoryLimit() {
      return CgroupFiles.single(dir.resolve("memory.max"));
    }

    @Override
    public void remove() {
      CgroupFiles.rmdir(dir);
    }
  }
}
