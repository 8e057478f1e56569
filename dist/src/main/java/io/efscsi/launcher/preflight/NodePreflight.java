package io.efscsi.launcher.preflight;

import io.efscsi.launcher.preflight.PreflightTable.Row;
import io.efscsi.launcher.preflight.PreflightTable.Verdict;
import io.efscsi.node.takeover.Discovery;
import io.efscsi.node.takeover.EfsUtilsDirs;
import io.efscsi.node.takeover.EfsUtilsState;
import io.efscsi.node.takeover.TakeoverPlan;
import io.efscsi.node.takeover.TakeoverPlanner;
import io.efscsi.node.takeover.UnusableStateException;
import io.efscsi.supervisor.host.MountInfo;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;

/**
 * The node half of {@code efs-csi preflight node}: the Go driver's mounts on this node, each read
 * as the takeover will read it once the Go driver's container is gone (the same discovery and
 * planner, with the Go driver taken as gone: its tunnels and watchdog are not waited for). A mount
 * the takeover would refuse hangs after the switch, so it is a refusal here.
 */
public final class NodePreflight {

  private NodePreflight() {}

  /**
   * @param table the host's mount table
   * @param dirs where efs-utils' state and config dirs of the host are seen
   */
  public static void check(List<MountInfo> table, EfsUtilsDirs dirs, PreflightTable out)
      throws IOException {
    List<EfsUtilsDirs.Stored> stored = dirs.list();
    TakeoverPlanner planner = new TakeoverPlanner(dirs);
    for (Discovery.Finding f :
        new Discovery(Duration.ZERO).scan(table, Set.of(), stored, port -> false, Instant.MAX)) {
      out.add(row(f, planner));
    }
  }

  private static Row row(Discovery.Finding f, TakeoverPlanner planner) {
    return switch (f) {
      case Discovery.Candidate c -> candidate(c, planner);
      case Discovery.Refused r ->
          new Row("mount", name(r.mountPoints(), r.port()), Verdict.REFUSE, r.reason());
      case Discovery.Plain p ->
          new Row(
              "mount",
              p.mountPoint(),
              Verdict.LEAVE,
              "NFS straight to " + p.source() + " (no TLS tunnel): it needs no proxy");
      case Discovery.Waiting w ->
          new Row("mount", "port " + w.port(), Verdict.REFUSE, "unexpected: " + w.why());
    };
  }

  private static Row candidate(Discovery.Candidate c, TakeoverPlanner planner) {
    String name = name(c.mountPoints(), c.port());
    try {
      TakeoverPlan plan = planner.plan(c.state(), c.mountPoints());
      EfsUtilsState s = plan.state();
      return new Row(
          "mount",
          name,
          Verdict.TAKE_OVER,
          s.fileSystemId()
              + s.accessPointId().map(ap -> " " + ap).orElse("")
              + ": "
              + tunnel(s.tunnel())
              + (s.tls() ? " with TLS" : " without TLS")
              + (s.iam() ? " and IAM" : "")
              + " to "
              + s.upstreamHost()
              + ":"
              + s.upstreamPort()
              + plan.certificate()
                  .map(x ->
                      x.efsUtilsCertificate().isPresent()
                          ? "; its client certificate is reused"
                          : "; a client certificate is made for it")
                  .orElse(""));
    } catch (UnusableStateException e) {
      return new Row("mount", name, Verdict.REFUSE, e.getMessage());
    }
  }

  private static String tunnel(EfsUtilsState.Tunnel t) {
    return switch (t) {
      case STUNNEL -> "stunnel";
      case EFS_PROXY_V2 -> "efs-proxy (efs-utils 2)";
      case EFS_PROXY_V3 -> "efs-proxy (efs-utils 3)";
    };
  }

  private static String name(List<String> mountPoints, int port) {
    return (mountPoints.isEmpty() ? "?" : String.join(",", mountPoints)) + " (port " + port + ")";
  }
}
