package io.efscsi.controller.provision;

import io.efscsi.common.error.DriverException;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A volume handle, in every form the Go driver accepts: {@code fs-…}, {@code fs-…:/path}, {@code
 * fs-…::fsap-…}, {@code fs-…:/path:fsap-…}, and the typed {@code efs:fs-…[:path[:fsap-…]]} and
 * {@code s3files:fs-…[:path[:fsap-…]]}. CreateVolume writes {@code fs-…::fsap-…} for EFS, as the Go
 * driver v3.5.0 does again (v3.0-v3.4.2 wrote {@code efs:fs-…::fsap-…}, which EKS Fargate's mounter
 * refuses: kubernetes-sigs/aws-efs-csi-driver#1947, #1950), and {@code s3files:fs-…::fsap-…} for S3
 * Files, whose type the handle must name.
 */
public record VolumeId(
    String type, String fileSystemId, String subPath, Optional<String> accessPointId) {

  private static final Pattern FS = Pattern.compile("fs-[0-9a-f]{8,40}");
  private static final Pattern AP = Pattern.compile("fsap-[0-9a-f]{8,40}");

  /** Whether {@code s} has the form of a file system id: {@code fs-[0-9a-f]{8,40}}. */
  public static boolean isFileSystemId(String s) {
    return FS.matcher(s).matches();
  }

  /** The handle CreateVolume returns for an EFS access point: {@code fs-…::fsap-…}. */
  public static String format(String fileSystemId, String accessPointId) {
    return format("efs", fileSystemId, accessPointId);
  }

  /**
   * The handle CreateVolume returns: {@code fs-…::fsap-…} for EFS (no type prefix: EKS Fargate's
   * mounter refuses one), {@code s3files:fs-…::fsap-…} for S3 Files.
   */
  public static String format(String type, String fileSystemId, String accessPointId) {
    String handle = fileSystemId + "::" + accessPointId;
    return type.equals("efs") ? handle : type + ":" + handle;
  }

  /** Whether the handle names an Amazon S3 Files file system ({@code s3files:…}). */
  public boolean s3files() {
    return type.equals("s3files");
  }

  /**
   * Parses any accepted form.
   *
   * @throws DriverException INVALID_ARGUMENT naming the handle and what is wrong with it
   */
  public static VolumeId parse(String id) {
    String[] t = id.split(":", -1);
    String type = "efs";
    int first = 0;
    if (t[0].equals("efs") || t[0].equals("s3files")) {
      type = t[0];
      first = 1;
    }
    int fields = t.length - first;
    if (fields < 1 || fields > 3) {
      throw DriverException.invalidArgument(
          "volume ID '%s' is invalid: expected fs-ID[:path[:fsap-ID]], optionally prefixed by efs: or"
              + " s3files:",
          id);
    }
    String fs = t[first];
    if (!FS.matcher(fs).matches()) {
      throw DriverException.invalidArgument(
          "volume ID '%s' is invalid: Expected a file system ID of the form 'fs-[0-9a-f]{8,40}', got"
              + " '%s'",
          id, fs);
    }
    String path = fields >= 2 ? t[first + 1] : "";
    Optional<String> ap = Optional.empty();
    if (fields == 3 && !t[first + 2].isEmpty()) {
      if (!AP.matcher(t[first + 2]).matches()) {
        throw DriverException.invalidArgument(
            "volume ID '%s' is invalid: Expected an access point ID of the form"
                + " 'fsap-[0-9a-f]{8,40}', got '%s'",
            id, t[first + 2]);
      }
      ap = Optional.of(t[first + 2]);
    }
    return new VolumeId(type, fs, path, ap);
  }
}
