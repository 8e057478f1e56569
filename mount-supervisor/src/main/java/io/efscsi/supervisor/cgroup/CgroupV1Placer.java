package io.efscsi.supervisor.cgroup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * cgroup v1: one group per proxy in the memory and pids hierarchies ({@code <root>/memory/<parent>/
 * <name>} and {@code <root>/pids/…}). Limits: memory.limit_in_bytes (and memsw when swap accounting
 * is on), pids.max. OOM kills read from memory.oom_control's {@code oom_kill} counter.
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
    return new Group(rel);
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
      return Map.of(
          "EFSCSI_CGROUP_PROCS",
          memory().resolve("cgroup.procs") + " " + pidsGroup().resolve("cgroup.procs"));
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
    }
  }
}
