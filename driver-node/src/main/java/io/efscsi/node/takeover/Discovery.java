package io.efscsi.node.takeover;

import io.efscsi.supervisor.host.MountInfo;
import io.efscsi.supervisor.host.MountPresence;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.IntPredicate;

/**
 * Finds the mounts this driver did not make: loopback NFS mounts on ports no proxy of ours holds,
 * matched by port to efs-utils' state. The no-double-ownership rule lives here: while anything
 * listens on the port (the Go driver's proxy), or efs-utils' watchdog rewrote the state within
 * {@code quiet} (a live watchdog rewrites it every second and would restart its own proxy), the
 * mount is not ours to take: it is looked at again on the next pass.
 */
public final class Discovery {

  /** What one pass found for one port (or one plain mount). */
  public sealed interface Finding {
    int port();
  }

  /** Efs-utils state for the port that can be taken over. */
  public record Candidate(EfsUtilsState state, List<String> mountPoints) implements Finding {
    @Override
    public int port() {
      return state.port();
    }
  }

  /** Not ours yet (the Go driver still serves it); no action, looked at again next pass. */
  public record Waiting(int port, String why) implements Finding {}

  /** Left alone for good (until its state changes), with the reason. */
  public record Refused(int port, List<String> mountPoints, String reason) implements Finding {}

  /** An NFS mount straight to a server, without a proxy: nothing to take over. */
  public record Plain(String mountPoint, String source) implements Finding {
    @Override
    public int port() {
      return 0;
    }
  }

  private final Duration quiet;

  /**
   * @param quiet how long efs-utils' state must have been left untouched before a takeover
   */
  public Discovery(Duration quiet) {
    this.quiet = quiet;
  }

  /**
   * @param table a fresh read of the mount table
   * @param ours ports our supervisor holds (never looked at)
   * @param stored efs-utils' mount states
   * @param listening whether something listens on 127.0.0.1:port
   * @param now the time, to judge the state files' age
   */
  public List<Finding> scan(
      List<MountInfo> table,
      Set<Integer> ours,
      List<EfsUtilsDirs.Stored> stored,
      IntPredicate listening,
      Instant now) {
    List<Finding> out = new ArrayList<>();
    Map<Integer, List<MountInfo>> byPort = new TreeMap<>(MountPresence.byPort(table));
    for (Map.Entry<Integer, List<MountInfo>> e : byPort.entrySet()) {
      int port = e.getKey();
      if (ours.contains(port)) {
        continue;
      }
      List<String> points = e.getValue().stream().map(MountInfo::mountPoint).toList();
      List<EfsUtilsDirs.Stored> states = stored.stream().filter(s -> s.port() == port).toList();
      if (states.isEmpty()) {
        out.add(new Refused(port, points, "no efs-utils state names port " + port));
        continue;
      }
      if (states.size() > 1) {
        out.add(
            new Refused(
                port,
                points,
                "efs-utils state is ambiguous: "
                    + states.stream().map(EfsUtilsDirs.Stored::stem).toList()
                    + " all name port "
                    + port));
        continue;
      }
      EfsUtilsDirs.Stored s = states.get(0);
      if (listening.test(port)) {
        out.add(new Waiting(port, "a process still listens on 127.0.0.1:" + port));
        continue;
      }
      Duration age = Duration.between(s.modified(), now);
      if (age.compareTo(quiet) < 0) {
        out.add(
            new Waiting(
                port,
                "efs-utils' watchdog wrote "
                    + s.stem()
                    + " "
                    + Math.max(0, age.toMillis())
                    + " ms ago (it is alive)"));
        continue;
      }
      if (s.config().isEmpty()) {
        out.add(new Refused(port, points, "efs-utils state " + s.stem() + " has no tunnel config"));
        continue;
      }
      try {
        out.add(
            new Candidate(
                EfsUtilsStateParser.parse(s.stem(), s.state(), s.config().get()), points));
      } catch (UnusableStateException x) {
        out.add(new Refused(port, points, x.getMessage()));
      }
    }
    for (MountInfo m : table) {
      boolean nfs = m.fsType().equals("nfs4") || m.fsType().equals("nfs");
      if (nfs && !m.isLoopbackNfs() && m.source().contains(".efs.")) {
        out.add(new Plain(m.mountPoint(), m.source()));
      }
    }
    return out;
  }
}
