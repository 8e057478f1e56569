package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code bin/efs-csi demo} run as a new user runs it: its output (every step, the heal on the same
 * port, bytes byte-exact, no log lines or raw maps on the screen), {@code --quiet} and {@code
 * --json}, and a machine as clean afterwards as before (no loopback or stand-in mounts, no proxy or
 * ganesha processes, no efs-csi cgroups, no state records or temporary directories), also when the
 * demo is stopped with SIGINT half-way.
 */
class DemoIT {

  static final List<String> STEPS =
      List.of(
          "start EFS emulator + mount target",
          "start the driver ('all' mode)",
          "CreateVolume",
          "NodeStage",
          "NodePublish x3",
          "write in pod A",
          "read in pod B",
          "heal: kill -9 mid-transfer",
          "NodeGetVolumeStats",
          "NodeUnpublish x3",
          "NodeUnstage",
          "DeleteVolume");

  Path home;
  Set<String> before;

  @BeforeEach
  void snapshot() throws Exception {
    home = Files.createTempDirectory("efscsi-demo-it");
    before = leftovers();
  }

  @AfterEach
  void cleanMachine() throws Exception {
    Set<String> after = leftovers();
    after.removeAll(before);
    HostCleanup.deleteTree(home);
    assertEquals(Set.of(), after, "what the demo left on the machine");
  }

  record Run(int exit, String out, String err) {}

  Process start(String... flags) throws Exception {
    List<String> cmd = new ArrayList<>();
    // SIGINT as at a terminal: a test run started in the background (nohup …, &) has it ignored,
    // and a process that inherits an ignored SIGINT keeps ignoring it (the JVM too)
    cmd.addAll(
        List.of(
            "python3",
            "-c",
            "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL);"
                + " os.execv(sys.argv[1], sys.argv[1:])"));
    cmd.add(PackagedDriver.distDir().resolve("bin/efs-csi").toString());
    cmd.add("demo");
    cmd.addAll(List.of(flags));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(home.resolve("err.txt").toFile());
    Map<String, String> env = pb.environment();
    env.clear();
    env.putAll(PackagedDriver.cleanEnv());
    env.put("XDG_STATE_HOME", home.toString());
    return pb.start();
  }

  Run run(String... flags) throws Exception {
    Process p = start(flags);
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(180, TimeUnit.SECONDS), "demo still running after 180 s");
    return new Run(p.exitValue(), out, Files.readString(home.resolve("err.txt")));
  }

  @Test
  void theWholeLifeIsToldStepByStepAndHealsOnTheSamePort() throws Exception {
    Run r = run();
    assertEquals(0, r.exit(), r.out() + r.err());
    for (String step : STEPS) {
      assertTrue(r.out().contains("] " + step + " "), "step " + step + " in:\n" + r.out());
    }
    assertTrue(
        r.out()
            .matches("(?s).*back +pid \\d+ on the same port 127\\.0\\.0\\.1:\\d+ after \\d+ ms.*"),
        r.out());
    assertTrue(r.out().contains("completed without an error, byte-exact"), r.out());
    assertTrue(r.out().matches("(?s).*byte-exact +yes, \\d+ bytes.*"), r.out());
    assertTrue(
        r.out().contains("owned by 50000:50000"),
        "the access point's user on the server:\n" + r.out());
    assertTrue(r.out().contains("STAND-IN") || r.out().contains("kernel's NFS client"), r.out());
    assertTrue(r.out().contains("result: every step done"), r.out());
    assertFalse(
        r.out().contains("cause=null") || r.out().contains("={"), "no raw maps:\n" + r.out());
    assertFalse(
        r.out().lines().anyMatch(l -> l.matches("^\\d{4}-\\d\\d-\\d\\dT.*(INFO|WARN|ERROR).*")),
        "no log lines on the screen:\n" + r.out());
    assertEquals("", r.err().strip());
    Path log = home.resolve("efs-csi/demo.log");
    assertTrue(r.out().contains(log.toString()), r.out());
    assertTrue(Files.readString(log).contains("staged"), "the driver's log is in its file");
  }

  @Test
  void quietPrintsTheSummaryOnlyAndJsonTheSummaryAsJson() throws Exception {
    Run quiet = run("--quiet");
    assertEquals(0, quiet.exit(), quiet.out() + quiet.err());
    assertTrue(quiet.out().strip().startsWith("step "), quiet.out());
    assertFalse(quiet.out().contains("[ 1]"), quiet.out());
    assertTrue(quiet.out().contains("heal: kill -9 mid-transfer"), quiet.out());

    Run json = run("--json");
    assertEquals(0, json.exit(), json.out() + json.err());
    String j = json.out().strip();
    assertTrue(j.startsWith("{\"ok\":true,") && j.endsWith("}}"), j);
    assertTrue(
        j.matches(
            ".*\"heal\":\\{\"portBefore\":(\\d+),\"portAfter\":\\1,\"samePort\":true,.*\"byteExact\":true}}"),
        j);
    assertEquals(1, j.lines().count(), j);
    for (String step : STEPS) {
      assertTrue(j.contains("{\"step\":\"" + step.replace("'", "'") + "\""), step + " in " + j);
    }
    assertTrue(j.contains("\"proxyRestarts\":1"), j);
  }

  @Test
  void ctrlCHalfWayLeavesNothingBehind() throws Exception {
    Process p = start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    List<String> seen = new ArrayList<>();
    for (String l = out.readLine(); l != null; l = out.readLine()) {
      seen.add(l);
      if (l.contains("] NodePublish x3")) {
        break;
      }
    }
    assertTrue(seen.getLast().contains("NodePublish"), String.join("\n", seen));
    assertFalse(leftoversNow().isEmpty(), "the demo has mounts and a proxy up");
    new ProcessBuilder("kill", "-INT", Long.toString(p.pid())).start().waitFor();
    out.transferTo(java.io.Writer.nullWriter());
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "demo still running 60 s after SIGINT");
    assertEquals(130, p.exitValue());
    String err = Files.readString(home.resolve("err.txt"));
    assertTrue(err.contains("interrupted; cleaned up: 1 proxies stopped"), err);
  }

  /** What the demo has up now, beyond what was there before. */
  Set<String> leftoversNow() throws Exception {
    Set<String> now = leftovers();
    now.removeAll(before);
    return now;
  }

  /** scripts/leftovers.sh's list, for what the demo makes. */
  static Set<String> leftovers() throws Exception {
    Set<String> s = new HashSet<>();
    try (Stream<Path> tmp = Files.list(Path.of("/tmp"))) {
      tmp.filter(p -> p.getFileName().toString().startsWith("efs-csi-demo"))
          .forEach(p -> s.add("temp: " + p));
    }
    for (Path root : HostCleanup.CGROUP_ROOTS) {
      if (Files.isDirectory(root)) {
        try (Stream<Path> groups = Files.list(root)) {
          groups
              .filter(g -> g.getFileName().toString().contains("efs-csi-demo"))
              .forEach(g -> s.add("cgroup: " + g));
        }
      }
    }
    for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
      if (line.contains(" - nfs") && line.contains(" 127.0.0.1:")
          || line.contains("/efs-csi-demo")) {
        s.add("mount: " + line.split(" ")[4]);
      }
    }
    ProcessHandle.allProcesses()
        .forEach(ph -> {
          String cmd = ph.info().commandLine().orElse("");
          if (cmd.contains("io.efscsi.proxy.ProxyMain")
              || cmd.contains("ganesha.nfsd")
              || cmd.contains("io.efscsi.launcher.Main demo")) {
            s.add("process: " + ph.pid() + " " + cmd);
          }
        });
    return s;
  }
}
