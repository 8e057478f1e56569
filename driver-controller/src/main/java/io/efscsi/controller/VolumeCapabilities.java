package io.efscsi.controller;

import io.efscsi.csi.v1.VolumeCapability;
import io.efscsi.csi.v1.VolumeCapability.AccessMode.Mode;
import java.util.List;
import java.util.Optional;

/**
 * Which volume capabilities an EFS volume can serve: a mount (never block) with fsType empty,
 * {@code efs} or {@code s3files} (as the Go driver's validateFStype), every access mode CSI defines
 * (EFS serves readers and writers on any number of nodes; the Go driver accepts only
 * SINGLE_NODE_WRITER and MULTI_NODE_MULTI_WRITER), and no {@code crossaccount} mount flag (a volume
 * attribute, not a mount option).
 */
final class VolumeCapabilities {

  private VolumeCapabilities() {}

  /** Why the capabilities cannot be served, or empty when they can. */
  static Optional<String> problem(List<VolumeCapability> caps) {
    for (VolumeCapability c : caps) {
      if (c.hasBlock()) {
        return Optional.of("block access type is not supported: EFS volumes are file systems");
      }
      if (!c.hasMount()) {
        return Optional.of("volume capability has no access type: expected mount");
      }
      String fsType = c.getMount().getFsType();
      if (!fsType.isEmpty() && !fsType.equals("efs") && !fsType.equals("s3files")) {
        return Optional.of(
            "fsType '" + fsType + "' is not supported: use efs, s3files or leave it empty");
      }
      for (String flag : c.getMount().getMountFlagsList()) {
        if (flag.strip().equalsIgnoreCase("crossaccount")) {
          return Optional.of(
              "mount option crossaccount is not supported in volume capabilities: set it in the"
                  + " provisioner secret or as a volume attribute");
        }
      }
      Mode mode = c.getAccessMode().getMode();
      if (mode == Mode.UNKNOWN || mode == Mode.UNRECOGNIZED) {
        return Optional.of("access mode " + mode + " is not supported");
      }
    }
    return Optional.empty();
  }
}
