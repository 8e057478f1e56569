package io.efscsi.node.takeover;

import java.util.List;

/**
 * What the operator hears about takeovers: log lines ({@link #LOG}) and, in a cluster, Events on
 * the pods ({@link PodTakeoverEvents}).
 */
public interface TakeoverEvents {

  /** A mount left alone, with the reason; reported once per port and reason. */
  void refused(int port, List<String> mountPoints, String reason);

  /** A port taken over. */
  void tookOver(TakeoverPlan plan, String certificate);

  /** Log lines naming the pod and volume of each mount point. */
  TakeoverEvents LOG = new LoggingTakeoverEvents();
}
