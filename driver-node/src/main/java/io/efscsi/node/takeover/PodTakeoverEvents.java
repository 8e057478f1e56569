package io.efscsi.node.takeover;

import io.efscsi.node.events.PodEvents;
import java.util.List;

/**
 * Takeover news as log lines ({@link TakeoverEvents#LOG}) and as Kubernetes Events on the pods
 * whose mounts they are about: {@code TakeoverRefused} (Warning) for a mount left alone, with the
 * reason, and {@code MountTakenOver} (Normal) for a port a proxy of ours now serves.
 */
public final class PodTakeoverEvents implements TakeoverEvents {

  private final PodEvents events;

  public PodTakeoverEvents(PodEvents events) {
    this.events = events;
  }

  @Override
  public void refused(int port, List<String> mountPoints, String reason) {
    LOG.refused(port, mountPoints, reason);
    for (String mp : mountPoints) {
      events.record(
          mp,
          PodEvents.Type.Warning,
          "TakeoverRefused",
          "efs-csi: the Go driver's mount on 127.0.0.1:"
              + port
              + " is left alone and keeps no proxy (its I/O waits or fails until the pod is"
              + " restarted): "
              + reason);
    }
  }

  @Override
  public void tookOver(TakeoverPlan plan, String certificate) {
    LOG.tookOver(plan, certificate);
    EfsUtilsState s = plan.state();
    for (String mp : plan.users()) {
      events.record(
          mp,
          PodEvents.Type.Normal,
          "MountTakenOver",
          "efs-csi: the Go driver's mount of "
              + s.fileSystemId()
              + " on 127.0.0.1:"
              + plan.port()
              + " is served by a proxy of efs-csi now ("
              + (s.tls() ? "TLS, " + certificate : "plain TCP")
              + ")");
    }
  }
}
