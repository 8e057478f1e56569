package io.efscsi.demo;

import io.efscsi.supervisor.state.ProxyRecord;
import io.efscsi.supervisor.state.StateStore;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** What the demo reads about a proxy from its state record, /proc and cgroupfs. */
final class DemoProxy {

  private static final Path CGROUPS = Path.of("/sys/fs/cgroup");

  private DemoProxy() {}

  /** Resident memory of {@code pid} in bytes, -1 when unknown. */
  static long rss(long pid) {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("\\D", "")) * 1024;
        }
      }
    } catch (IOException | NumberFormatException e) {
      // gone
    }
    return -1;
  }

  /** The memory controller's directory of the proxy's cgroup, or null when not placed. */
  private static Path memoryDir(ProxyRecord r) {
    String c = r.cgroup();
    if (c.startsWith("v1:")) {
      return CGROUPS.resolve("memory").resolve(c.substring(3));
    }
    if (c.startsWith("v2:")) {
      return CGROUPS.resolve(c.substring(3));
    }
    return null;
  }

  static String cgroup(ProxyRecord r) {
    Path dir = memoryDir(r);
    return dir == null
        ? "none (" + (r.cgroup().isEmpty() ? "not placed" : r.cgroup()) + ")"
        : dir.toString();
  }

  static String memoryLimit(ProxyRecord r) {
    Path dir = memoryDir(r);
    if (dir == null) {
      return "none";
    }
    for (String f : new String[] {"memory.limit_in_bytes", "memory.max"}) {
      try {
        String v = Files.readString(dir.resolve(f)).strip();
        return v.matches("\\d+") ? DemoReport.size(Long.parseLong(v)) + " (" + f + ")" : v;
      } catch (IOException e) {
        // the other controller version
      }
    }
    return "unknown";
  }

  static boolean cgroupGone(ProxyRecord r) {
    Path dir = memoryDir(r);
    return dir == null || !Files.exists(dir);
  }

  /** uid:gid and mode of a file. */
  static String owner(Path file) throws IOException {
    Object uid = Files.getAttribute(file, "unix:uid");
    Object gid = Files.getAttribute(file, "unix:gid");
    return uid + ":" + gid;
  }

  /** The record once a new process serves the proxy's port after {@code before}'s died. */
  static ProxyRecord awaitRestart(StateStore records, ProxyRecord before, int seconds)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (System.nanoTime() < deadline) {
      for (ProxyRecord r : records.list()) {
        if (r.id().equals(before.id()) && r.pid() > 0 && r.pid() != before.pid()) {
          try (Socket s = new Socket("127.0.0.1", r.port())) {
            return r;
          } catch (IOException notYet) {
            // starting
          }
        }
      }
      Thread.sleep(10);
    }
    throw new IllegalStateException(
        "the proxy killed with SIGKILL was not back within " + seconds + " s");
  }
}
