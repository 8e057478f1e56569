package io.efscsi.node.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.efscsi.common.error.DriverException;
import java.util.HashMap;
import java.util.Map;

/**
 * Any volumeAttributes map (keys of the Go driver's and kubelet's pod info, in any case, with any
 * values, or others) and any mount options parse or are INVALID_ARGUMENT with a message; the pod
 * reference of the same map likewise, and it names the pod only with namespace, name and uid.
 */
class VolumeContextFuzzTest {

  static final String[] KEYS = {
    "encryptInTransit",
    "encryptintransit",
    "mounttargetip",
    "mountTargetIp",
    "az",
    "storage.kubernetes.io/csiProvisionerIdentity",
    "crossaccount",
    "mounttargetipmap",
    "fsap",
    "path",
    "mountOptions",
    "x",
    VolumeContext.POD_NAME,
    VolumeContext.POD_NAMESPACE,
    VolumeContext.POD_UID,
    VolumeContext.SERVICE_ACCOUNT_NAME,
    VolumeContext.EPHEMERAL,
    "CSI.storage.k8s.io/EPHEMERAL"
  };

  // CI's budget is a count of inputs (about what 10 s of fuzzing ran alone on this kind
  // of machine), not a time: the tier runs beside the ITs on the CPU they leave idle, where a
  // time budget ran a sixth as many (docs/reliability.md, "Fuzzed parsers")
  @FuzzTest(maxDuration = "300s", maxExecutions = 65_000)
  void anyAttributesAndMountOptionsParseOrAreInvalidArgument(FuzzedDataProvider data) {
    Map<String, String> attributes = new HashMap<>();
    int n = data.consumeInt(0, 6);
    for (int i = 0; i < n; i++) {
      String key = data.consumeBoolean() ? data.pickValue(KEYS) : data.consumeString(24);
      attributes.put(key, data.consumeString(64));
    }
    java.util.List<String> flags = new java.util.ArrayList<>();
    int m = data.consumeInt(0, 6);
    for (int i = 0; i < m; i++) {
      flags.add(data.consumeString(48));
    }
    try {
      VolumeContext.parse(attributes);
    } catch (DriverException e) {
      assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind(), e.getMessage());
      FuzzChecks.clear(e);
    }
    try {
      VolumeContext.podRef(attributes)
          .ifPresent(p -> {
            assertEquals(attributes.get(VolumeContext.POD_NAMESPACE), p.namespace());
            assertEquals(attributes.get(VolumeContext.POD_NAME), p.name());
            assertEquals(attributes.get(VolumeContext.POD_UID), p.uid());
          });
    } catch (DriverException e) {
      assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind(), e.getMessage());
      FuzzChecks.clear(e);
    }
    try {
      MountOptions.parse(flags);
    } catch (DriverException e) {
      assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind(), e.getMessage());
      FuzzChecks.clear(e);
    }
  }
}
