package io.efscsi.node.volume;

import java.util.List;
import java.util.Map;

/** Works out a volume's {@link MountPlan}; throws DriverException on bad input. */
@FunctionalInterface
public interface VolumePlanner {
  MountPlan plan(
      String volumeId,
      Map<String, String> volumeContext,
      List<String> mountFlags,
      boolean readOnly);
}
