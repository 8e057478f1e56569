package io.efscsi.supervisor.cgroup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cgroupfs adapters against a fake cgroup tree, and systemd against a recording systemd-run.
 */
class CgroupPlacersTest {

  @TempDir Path root;

  /** Runs the wrapped command for real; it prints its own pid, which must be the one placed. */
  private static String runWrapped(Placement p) throws Exception {
    List<String> cmd = p.wrap(List.of("/bin/sh", "-c", "echo $$"));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().putAll(p.environment());
    Process proc = pb.start();
    String out = new String(proc.getInputStream().readAllBytes()).strip();
    assertEquals(0, proc.waitFor(), out);
    assertEquals(Long.toString(proc.pid()), out, "the exec chain keeps the pid");
    return out;
  }

  @Test
  void v2CreatesTheGroupWithLimitsEnablesControllersAndPlacesThePid() throws Exception {
    Files.writeString(root.resolve("cgroup.controllers"), "cpuset cpu io memory pids\n");
    Files.writeString(root.resolve("cgroup.subtree_control"), "");
    Path parent = root.resolve("efs-csi");
    Files.createDirectories(parent);
    Files.writeString(parent.resolve("cgroup.controllers"), "memory pids\n");
    Files.writeString(parent.resolve("cgroup.subtree_control"), "");
    Path group = parent.resolve("proxy-20049");
    Files.createDirectories(group);
    for (String f :
        List.of("memory.max", "memory.swap.max", "memory.oom.group", "pids.max", "cgroup.procs")) {
      Files.writeString(group.resolve(f), "");
    }
    CgroupV2Placer placer = new CgroupV2Placer(root, "efs-csi");
    Placement p = placer.place("proxy-20049", new Limits(64L << 20, 32));
    assertEquals("v2:efs-csi/proxy-20049", p.describe());
    assertEquals("+memory +pids", Files.readString(root.resolve("cgroup.subtree_control")));
    assertEquals("+memory +pids", Files.readString(parent.resolve("cgroup.subtree_control")));
    assertEquals("67108864", Files.readString(group.resolve("memory.max")));
    assertEquals("0", Files.readString(group.resolve("memory.swap.max")));
    assertEquals("1", Files.readString(group.resolve("memory.oom.group")));
    assertEquals("32", Files.readString(group.resolve("pids.max")));
    String pid = runWrapped(p);
    assertEquals(pid + "\n", Files.readString(group.resolve("cgroup.procs")));

    assertEquals(-1, p.oomKills(), "no memory.events yet");
    Files.writeString(group.resolve("memory.events"), "low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\n");
    assertEquals(2, placer.existing(p.describe()).oomKills(), "re-read from the record's form");
    Files.delete(group.resolve("memory.events"));
    for (String f :
        List.of("memory.max", "memory.swap.max", "memory.oom.group", "pids.max", "cgroup.procs")) {
      Files.delete(group.resolve(f));
    }
    p.remove();
    assertFalse(Files.exists(group));
  }

  @Test
  void v1UsesTheMemoryAndPidsHierarchies() throws Exception {
    Path mem = root.resolve("memory/efs-csi/proxy-20050");
    Path pids = root.resolve("pids/efs-csi/proxy-20050");
    Files.createDirectories(mem);
    Files.createDirectories(pids);
    for (String f : List.of("memory.limit_in_bytes", "cgroup.procs")) {
      Files.writeString(mem.resolve(f), "");
    }
    Files.writeString(pids.resolve("pids.max"), "");
    Files.writeString(pids.resolve("cgroup.procs"), "");
    CgroupV1Placer placer = new CgroupV1Placer(root, "efs-csi");
    Placement p = placer.place("proxy-20050", new Limits(32L << 20, 16));
    assertEquals("v1:efs-csi/proxy-20050", p.describe());
    assertEquals("33554432", Files.readString(mem.resolve("memory.limit_in_bytes")));
    assertFalse(
        Files.exists(mem.resolve("memory.memsw.limit_in_bytes")), "swap knob only when present");
    assertEquals("16", Files.readString(pids.resolve("pids.max")));
    String pid = runWrapped(p);
    assertEquals(pid + "\n", Files.readString(mem.resolve("cgroup.procs")));
    assertEquals(pid + "\n", Files.readString(pids.resolve("cgroup.procs")));
    Files.writeString(
        mem.resolve("memory.oom_control"), "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
    assertEquals(1, p.oomKills());
  }

  @Test
  void v1AlsoLeavesThePodsGroupInEveryOtherHierarchy() throws Exception {
    for (String h : List.of("memory", "pids", "devices", "cpuset", "freezer")) {
      Files.createDirectories(root.resolve(h));
      Files.writeString(root.resolve(h).resolve("cgroup.procs"), "");
    }
    Files.writeString(root.resolve("cpuset/cpuset.cpus"), "0-1\n");
    Files.writeString(root.resolve("cpuset/cpuset.mems"), "0\n");
    // the kernel makes a new cpuset group's knobs empty
    for (String d : List.of("cpuset/efs-csi", "cpuset/efs-csi/proxy-7")) {
      Files.createDirectories(root.resolve(d));
      Files.writeString(root.resolve(d).resolve("cpuset.cpus"), "");
      Files.writeString(root.resolve(d).resolve("cpuset.mems"), "");
      Files.writeString(root.resolve(d).resolve("cgroup.procs"), "");
    }
    for (String h : List.of("memory", "pids", "devices", "freezer")) {
      Files.createDirectories(root.resolve(h + "/efs-csi/proxy-7"));
      Files.writeString(root.resolve(h + "/efs-csi/proxy-7/cgroup.procs"), "");
    }
    Placement p = new CgroupV1Placer(root, "efs-csi").place("proxy-7", new Limits(0, 0));
    assertEquals("0-1", Files.readString(root.resolve("cpuset/efs-csi/proxy-7/cpuset.cpus")));
    assertEquals("0", Files.readString(root.resolve("cpuset/efs-csi/cpuset.mems")));
    String pid = runWrapped(p);
    for (String h : List.of("memory", "pids", "devices", "cpuset", "freezer")) {
      assertEquals(
          pid + "\n", Files.readString(root.resolve(h + "/efs-csi/proxy-7/cgroup.procs")), h);
    }
    for (String h : List.of("devices", "cpuset", "freezer")) {
      Files.delete(root.resolve(h + "/efs-csi/proxy-7/cgroup.procs"));
    }
    for (String h : List.of("cpuset")) {
      Files.delete(root.resolve(h + "/efs-csi/proxy-7/cpuset.cpus"));
      Files.delete(root.resolve(h + "/efs-csi/proxy-7/cpuset.mems"));
    }
    Files.delete(root.resolve("memory/efs-csi/proxy-7/cgroup.procs"));
    Files.delete(root.resolve("pids/efs-csi/proxy-7/cgroup.procs"));
    p.remove();
    for (String h : List.of("memory", "pids", "devices", "cpuset", "freezer")) {
      assertFalse(Files.exists(root.resolve(h + "/efs-csi/proxy-7")), h);
    }
  }

  @Test
  void aGroupThatCannotBeJoinedFailsTheStartWithItsOwnExitCode() throws Exception {
    Files.createDirectories(root.resolve("memory/efs-csi/proxy-1"));
    Files.createDirectories(root.resolve("pids/efs-csi/proxy-1"));
    Placement p = new CgroupV1Placer(root, "efs-csi").place("proxy-1", new Limits(0, 0));
    Files.createDirectories(root.resolve("memory/efs-csi/proxy-1/cgroup.procs")); // unwritable
    ProcessBuilder pb = new ProcessBuilder(p.wrap(List.of("/bin/true"))).redirectErrorStream(true);
    pb.environment().putAll(p.environment());
    Process proc = pb.start();
    String out = new String(proc.getInputStream().readAllBytes());
    assertEquals(CgroupFiles.EXIT_PLACEMENT_FAILED, proc.waitFor());
    assertTrue(out.contains("efs-csi: cannot join cgroup"), out);
  }

  @Test
  void systemdRunsAScopeWithTheLimits() throws Exception {
    Path record = root.resolve("args");
    Path fake = root.resolve("systemd-run");
    Files.writeString(
        fake,
        "#!/bin/sh\n"
            + "for a in \"$@\"; do echo \"$a\" >> '"
            + record
            + "'; done\n"
            + "while [ \"$1\" != \"--\" ]; do shift; done; shift\n"
            + "exec \"$@\"\n");
    Files.setPosixFilePermissions(fake, PosixFilePermissions.fromString("rwxr-xr-x"));
    SystemdScopePlacer placer = new SystemdScopePlacer(fake.toString(), "efs-csi.slice", root);
    Placement p = placer.place("proxy-20051", new Limits(48L << 20, 24));
    runWrapped(p);
    List<String> args = new ArrayList<>(Files.readAllLines(record));
    String unit = p.describe().substring("systemd:".length());
    assertTrue(unit.startsWith("efs-csi-proxy-20051-"), unit);
    assertEquals(
        List.of(
            "--scope",
            "--quiet",
            "--collect",
            "--unit=" + unit,
            "--slice=efs-csi.slice",
            "--property=MemoryMax=50331648",
            "--property=MemorySwapMax=0",
            "--property=OOMPolicy=kill",
            "--property=TasksMax=24",
            "--",
            "/bin/sh",
            "-c",
            "echo $$"),
        args);
    Path events = root.resolve("efs-csi.slice").resolve(unit + ".scope");
    Files.createDirectories(events);
    Files.writeString(events.resolve("memory.events"), "oom_kill 3\n");
    assertEquals(3, placer.existing(p.describe()).oomKills());
    assertThrows(
        IllegalArgumentException.class,
        () -> new SystemdScopePlacer(fake.toString(), "bad slice", root));
  }

  @Test
  void detectionPrefersV2ThenV1ThenSystemdThenNone() throws Exception {
    Path none = root.resolve("nothing");
    Files.createDirectories(none);
    Path noSystemd = root.resolve("no-systemd");
    assertEquals(
        "none", CgroupDetector.choose("auto", none, "efs-csi", "systemd-run", noSystemd).kind());
    Path v1 = root.resolve("v1");
    Files.createDirectories(v1.resolve("memory"));
    Files.createDirectories(v1.resolve("pids"));
    assertEquals(
        "v1", CgroupDetector.choose("auto", v1, "efs-csi", "systemd-run", noSystemd).kind());
    Files.writeString(v1.resolve("cgroup.controllers"), "cpu io\n");
    assertEquals(
        "v1",
        CgroupDetector.choose("auto", v1, "efs-csi", "systemd-run", noSystemd).kind(),
        "unified without memory");
    Path v2 = root.resolve("v2");
    Files.createDirectories(v2);
    Files.writeString(v2.resolve("cgroup.controllers"), "cpu memory pids\n");
    assertEquals(
        "v2", CgroupDetector.choose("auto", v2, "efs-csi", "systemd-run", noSystemd).kind());
    Path runtime = root.resolve("run-systemd");
    Files.createDirectories(runtime);
    assertEquals(
        "systemd", CgroupDetector.choose("auto", none, "efs-csi", "/bin/true", runtime).kind());
    assertEquals("v1", CgroupDetector.choose("V1", none, "efs-csi", "x", noSystemd).kind());
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> CgroupDetector.choose("v3", none, "p", "x", noSystemd));
    assertEquals(
        "proxy cgroup mode must be one of [auto, v2, v1, systemd, none], got 'v3'", e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> new CgroupV2Placer(root, "../escape"));
    assertTrue(e.getMessage().contains("'../escape'"), e.getMessage());
  }
}
