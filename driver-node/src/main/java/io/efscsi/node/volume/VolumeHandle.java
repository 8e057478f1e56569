package io.efscsi.node.volume;

import io.efscsi.common.error.DriverException;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A PV's {@code volumeHandle}, parsed exactly as the Go driver's {@code parseVolumeId} does.
 *
 * <p>Forms (fields split on {@code :}; empty fields mean "absent"):
 *
 * <ul>
 *   <li>legacy {@code fs-id[:subpath[:fsap-id]]} (at most three fields, always EFS);
 *   <li>typed {@code efs|s3files:fs-id[:subpath[:fsap-id]]} (at most four fields), which
 *       CreateVolume returns. A first field other than {@code efs}/{@code s3files} means the legacy
 *       form.
 * </ul>
 *
 * <p>The file system id must be {@code fs-[0-9a-f]{8,40}}, or a DNS name whose first or second
 * label is one ({@code [az.]fs-….efs.<region>.<suffix>}), which the Go driver v3.5.0 accepts again
 * in static PVs (its PR #1946, with the same structural check: only DNS characters, so no mount
 * option can be smuggled in); the access point id {@code fsap-[0-9a-f]{8,40}}. The subpath is
 * cleaned with Go's {@code path.Clean} and need not be absolute. Every error is INVALID_ARGUMENT
 * with the Go driver's message.
 *
 * @param type which backend the handle names
 * @param fileSystemId {@code fs-…}
 * @param subPath the cleaned subpath, {@code /} when the handle has none; relative to the access
 *     point's root when there is one
 * @param accessPointId {@code fsap-…} when the handle names an access point
 * @param dnsName the mount target DNS name the handle gives in place of the file system id
 */
public record VolumeHandle(
    Type type,
    String fileSystemId,
    String subPath,
    Optional<String> accessPointId,
    Optional<String> dnsName) {

  /** The backend a handle names. */
  public enum Type {
    EFS("efs"),
    S3FILES("s3files");

    private final String prefix;

    Type(String prefix) {
      this.prefix = prefix;
    }

    /** The handle's type prefix ({@code efs}, {@code s3files}). */
    public String prefix() {
      return prefix;
    }
  }

  static final Pattern FILE_SYSTEM_ID = Pattern.compile("fs-[0-9a-f]{8,40}");
  static final Pattern ACCESS_POINT_ID = Pattern.compile("fsap-[0-9a-f]{8,40}");

  /** Upstream's structural check of a DNS-name file system id (PR #1946). */
  static final Pattern DNS_FILE_SYSTEM_ID =
      Pattern.compile(
          "(?:[a-z0-9][a-z0-9-]*\\.)?(fs-[0-9a-f]{8,40})\\.[a-z0-9][a-z0-9.-]*[a-z0-9]");

  /** Parses a volume id; INVALID_ARGUMENT with the Go driver's message when it is malformed. */
  public static VolumeHandle parse(String volumeId) {
    String[] tokens = volumeId.split(":", -1);
    Type type = Type.EFS;
    int first = 0;
    if (tokens[0].equals(Type.EFS.prefix) || tokens[0].equals(Type.S3FILES.prefix)) {
      type = tokens[0].equals(Type.EFS.prefix) ? Type.EFS : Type.S3FILES;
      first = 1;
      if (tokens.length > 4) {
        throw invalid(volumeId, "Expected at most four fields separated by ':'");
      }
    } else if (tokens.length > 3) {
      throw invalid(volumeId, "Expected at most three fields separated by ':'");
    }
    String fsid = first < tokens.length ? tokens[first] : "";
    Optional<String> dnsName = Optional.empty();
    if (!FILE_SYSTEM_ID.matcher(fsid).matches()) {
      java.util.regex.Matcher dns = DNS_FILE_SYSTEM_ID.matcher(fsid);
      if (!dns.matches()) {
        throw invalid(volumeId, "Expected a file system ID of the form 'fs-[0-9a-f]{8,40}'");
      }
      dnsName = Optional.of(fsid);
      fsid = dns.group(1);
    }
    String subPath = "/";
    if (tokens.length > first + 1 && !tokens[first + 1].isEmpty()) {
      subPath = GoSyntax.cleanPath(tokens[first + 1]);
    }
    Optional<String> apid = Optional.empty();
    if (tokens.length > first + 2 && !tokens[first + 2].isEmpty()) {
      String ap = tokens[first + 2];
      if (!ACCESS_POINT_ID.matcher(ap).matches()) {
        throw new DriverException(
            DriverException.Kind.INVALID_ARGUMENT,
            "volume ID '"
                + volumeId
                + "' has an invalid access point ID '"
                + ap
                + "': Expected it to be of the form 'fsap-[0-9a-f]{8,40}'");
      }
      apid = Optional.of(ap);
    }
    return new VolumeHandle(type, fsid, subPath, apid, dnsName);
  }

  /**
   * The path to mount on the server: {@code /} plus the cleaned subpath, never above the root
   * (relative to the access point's root when there is one, as efs-utils mounts it).
   */
  public String exportPath() {
    return GoSyntax.cleanPath("/" + subPath);
  }

  private static DriverException invalid(String volumeId, String expected) {
    return new DriverException(
        DriverException.Kind.INVALID_ARGUMENT,
        "volume ID '" + volumeId + "' is invalid: " + expected);
  }
}
