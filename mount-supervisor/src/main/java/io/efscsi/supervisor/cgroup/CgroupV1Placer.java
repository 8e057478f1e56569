package io.efscsi.supervisor.cgroup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * cgroup v1: one group per proxy in the memory and pids hierarchies ({@code <root>/memory/<parent>/
 * <name>} and {@code <root>/pids/…}), which carry its limits: memory.limit_in_bytes (and memsw when
 * swap accounting is on), pids.max. OOM kills read from memory.oom_control's {@code oom_kill}
 * counter.
 *
 * <p>The proxy also leaves the plugin pod's group in every other mounted hierarchy (cpu, devices,
 * freezer, name=systemd, …), into a group of the same name: on v1, kubelet kills whatever is left
 * in any hierarchy of a deleted pod's cgroup, and runc finds a container's processes to kill (a
 * container sharing the host's PID namespace is killed whole when its main process exits) in the
 * devices hierarchy. A proxy left in one of them would die with the plugin's pod on every rollout.
 * Those extra groups are best effort: a hierarchy that cannot be written is skipped.
 */
public final class CgroupV1Placer implements CgroupPlacer {

  private final Path root;
  private final String parent;

  public CgroupV1Placer(Path root, String parent) {
    CgroupFiles.checkName("cgroup parent", parent);
    this.root = root;
    this.parent = parent;
  }

  @Override
  public String kind() {
    return "v1";
  }

  @Override
  public Placement place(String name, Limits limits) throws IOException {
    CgroupFiles.checkName("cgroup name", name);
    String rel = parent + "/" + name;
    Path memory = root.resolve("memory").resolve(rel);
    Path pids = root.resolve("pids").resolve(rel);
    Files.createDirectories(memory);
    Files.createDirectories(pids);
    if (limits.memoryBytes() > 0) {
      String bytes = Long.toString(limits.memoryBytes());
      CgroupFiles.write(memory.resolve("memory.limit_in_bytes"), bytes);
      CgroupFiles.writeIfPresent(memory.resolve("memory.memsw.limit_in_bytes"), bytes);
    }
    if (limits.pids() > 0) {
      CgroupFiles.write(pids.resolve("pids.max"), Integer.toString(limits.pids()));
    }
    for (Path hierarchy : otherHierarchies()) {
      try {
        makeGroup(hierarchy, rel);
      } catch (IOException e) {
        // best effort: the limits and accounting are in memory and pids
      }
    }
    return new Group(rel);
  }

  /**
   * Every mounted hierarchy under the root but memory and pids: a directory with its own {@code
   * cgroup.procs}.
   */
  private List<Path> otherHierarchies() {
    try (var dirs = Files.list(root)) {
      return dirs.filter(d -> !d.getFileName().toString().equals("memory"))
          .filter(d -> !d.getFileName().toString().equals("pids"))
          .filter(d -> Files.isDirectory(d) && Files.exists(d.resolve("cgroup.procs")))
          .sorted()
          .toList();
    } catch (IOException e) {
      return List.of();
    }
  }

  /** {@code hierarchy/rel}, each new level's cpuset given its parent's cpus and mems. */
  private static void makeGroup(Path hierarchy, String rel) throws IOException {
    Path dir = hierarchy;
    for (String part : rel.split("/")) {
      Path parentDir = dir;
      dir = dir.resolve(part);
      Files.createDirectories(dir);
      for (String knob : List.of("cpuset.cpus", "cpuset.mems")) {
        Path file = dir.resolve(knob);
        if (Files.exists(file) && Files.readString(file).isBlank()) {
          CgroupFiles.write(file, Files.readString(parentDir.resolve(knob)).strip());
        }
      }
    }
  }

  @Override
  public Placement existing(String described) {
    return new Group(CgroupPlacer.where(described));
  }

  private final class Group implements Placement {
    private final String rel;

    Group(String rel) {
      this.rel = rel;
    }

    private Path memory() {
      return root.resolve("memory").resolve(rel);
    }

    private Path pidsGroup() {
      return root.resolve("pids").resolve(rel);
    }

    @Override
    public String describe() {
      return "v1:" + rel;
    }

    @Override
    public List<String> wrap(List<String> command) {
      return CgroupFiles.wrapWithScript(command);
    }

    @Override
    public Map<String, String> environment() {
      StringBuilder procs =
          new StringBuilder()
              .append(memory().resolve("cgroup.procs"))
              .append(' ')
              .append(pidsGroup().resolve("cgroup.procs"));
      for (Path hierarchy : otherHierarchies()) {
        Path file = hierarchy.resolve(rel).resolve("cgroup.procs");
        if (Files.isWritable(file)) {
          procs.append(' ').append(file);
        }
      }
      return Map.of("EFSCSI_CGROUP_PROCS", procs.toString());
    }

    @Override
    public long oomKills() {
      return CgroupFiles.keyed(memory().resolve("memory.oom_control"), "oom_kill");
    }

    @Override
    public List<Long> pids() {
      return CgroupFiles.pids(pidsGroup().resolve("cgroup.procs"));
    }

    @Override
    public long memoryCurrent() {
      return CgroupFiles.single(memory().resolve("memory.usage_in_bytes"));
    }

    @Override
    public long memoryPeak() {
      return CgroupFiles.single(memory().resolve("memory.max_usage_in_bytes"));
    }

    @Override
    public long memoryLimit() {
      return CgroupFiles.single(memory().resolve("memory.limit_in_bytes"));
    }

    @Override
    public void remove() {
      CgroupFiles.rmdir(memory());
      CgroupFiles.rmdir(pidsGroup());
      for (Path hierarchy : otherHierarchies()) {
        CgroupFiles.rmdir(hierarchy.resolve(rel));
        // and the parent there once empty: nothing else ever names it in these hierarchies
        try {
          Files.deleteIfExists(hierarchy.resolve(rel).getParent());
        } catch (IOException stillUsed) {
          // another proxy's group is still in it
        }
      }
    }
  }
}
