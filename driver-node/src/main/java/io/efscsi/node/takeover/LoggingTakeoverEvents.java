package io.efscsi.node.takeover;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Takeover news as log lines, one per mount, naming the pod (uid) and volume. */
final class LoggingTakeoverEvents implements TakeoverEvents {

  private static final Logger LOG = LoggerFactory.getLogger(Takeover.class);
  private static final Pattern POD_TARGET =
      Pattern.compile(".*/pods/([^/]+)/volumes/kubernetes\\.io~csi/([^/]+)/mount");

  /** "pod <uid> volume <pv> (<path>)" for a kubelet target path, else the path. */
  static String describe(String mountPoint) {
    Matcher m = POD_TARGET.matcher(mountPoint);
    return m.matches()
        ? "pod " + m.group(1) + " volume " + m.group(2) + " (" + mountPoint + ")"
        : mountPoint;
  }

  @Override
  public void refused(int port, List<String> mountPoints, String reason) {
    for (String mp : mountPoints) {
      LOG.error(
          "not taking over the mount of {} on 127.0.0.1:{}; it is left alone: {}",
          describe(mp),
          port,
          reason);
    }
  }

  @Override
  public void tookOver(TakeoverPlan plan, String certificate) {
    EfsUtilsState s = plan.state();
    for (String mp : plan.users()) {
      LOG.info(
          "took over 127.0.0.1:{} for {}: {} via {}:{}, {}, {} ({})",
          plan.port(),
          describe(mp),
          s.fileSystemId(),
          s.upstreamHost(),
          s.upstreamPort(),
          s.tls() ? "TLS" : "plain TCP",
          certificate,
          s.tunnel());
    }
  }
}
