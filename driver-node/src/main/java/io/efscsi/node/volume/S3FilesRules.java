package io.efscsi.node.volume;

import io.efscsi.common.error.DriverException;
import java.util.List;

/**
 * What an Amazon S3 Files volume ({@code s3files:} handle) refuses or mounts differently, with the
 * Go driver's messages (its NodePublishVolume) and efs-utils' mount.s3files defaults.
 */
final class S3FilesRules {

  /** mount.s3files' NFS version when the mount options name none. */
  static final String NFS_VERSION = "nfsvers=4.2";

  private S3FilesRules() {}

  /** Refuses the volume attributes S3 Files cannot honour. */
  static void checkContext(VolumeContext ctx) {
    if (!ctx.encryptInTransit()) {
      throw new DriverException(
          DriverException.Kind.INVALID_ARGUMENT,
          "Encryption in transit cannot be disabled for S3 Files file system. Remove"
              + " 'encryptInTransit: false' from your volume configuration or omit the"
              + " encryptInTransit parameter (encryption is enabled by default).");
    }
    if (ctx.crossAccount()) {
      throw new DriverException(
          DriverException.Kind.INVALID_ARGUMENT,
          "Cross-account mounting is not supported for S3 Files file system. Remove"
              + " 'crossaccount: true' from your volume configuration.");
    }
  }

  /** The node's NFS defaults with mount.s3files' version (4.2) in place of theirs. */
  static List<String> nfsDefaults(List<String> defaults) {
    return NfsOptions.merge(defaults, List.of(NFS_VERSION));
  }
}
