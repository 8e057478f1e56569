package io.efscsi.node.volume;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * EFS mount target DNS names: {@code fs-….efs.<region>.<suffix>} and the zone-prefixed {@code
 * <zone>.fs-….efs.<region>.<suffix>}, with the per-partition suffix efs-utils configures in its
 * {@code [mount.<region>]} sections; and Amazon S3 Files ones, {@code
 * <zone-id>.fs-….s3files.<region>.<suffix>} (the Go driver's s3files-utils.conf: {@code
 * dns_name_format = {az_id}.{fs_id}.s3files.{region}.{dns_name_suffix}}, suffix {@code on.aws}, the
 * partition's suffix in the China and isolated regions).
 */
public final class EfsDnsNames {

  private EfsDnsNames() {}

  /** The DNS suffix of a region's partition. */
  public static String suffix(String region) {
    if (region.startsWith("cn-")) {
      return "amazonaws.com.cn";
    }
    if (region.startsWith("us-isob-")) {
      return "sc2s.sgov.gov";
    }
    if (region.startsWith("us-isof-")) {
      return "csp.hci.ic.gov";
    }
    if (region.startsWith("us-iso-")) {
      return "c2s.ic.gov";
    }
    if (region.startsWith("eu-isoe-")) {
      return "cloud.adc-e.uk";
    }
    if (region.startsWith("eusc-")) {
      return "amazonaws.eu";
    }
    return "amazonaws.com";
  }

  /** {@code fs-….efs.<region>.<suffix>}: the regional name, also the TLS server name. */
  public static String regional(String fileSystemId, String region) {
    return fileSystemId + ".efs." + region + "." + suffix(region);
  }

  /** {@code <zone>.fs-….efs.<region>.<suffix>}, for a zone name or a zone id. */
  public static String zonal(String zone, String fileSystemId, String region) {
    return zone + "." + regional(fileSystemId, region);
  }

  /** The S3 Files DNS suffix of a region: {@code on.aws} in the commercial partition. */
  public static String s3filesSuffix(String region) {
    String efs = suffix(region);
    return efs.equals("amazonaws.com") ? "on.aws" : efs;
  }

  /**
   * {@code fs-….s3files.<region>.<suffix>}: the TLS server name of S3 Files mount targets
   * (efs-utils checks the DNS name from the file system id on).
   */
  public static String s3filesServerName(String fileSystemId, String region) {
    return fileSystemId + ".s3files." + region + "." + s3filesSuffix(region);
  }

  /** {@code <zone-id>.fs-….s3files.<region>.<suffix>}: where an S3 Files mount connects. */
  public static String s3filesZonal(String zoneId, String fileSystemId, String region) {
    return zoneId + "." + s3filesServerName(fileSystemId, region);
  }

  /**
   * A mount target's DNS name as efs-utils reads one: {@code [<zone>.]fs-….efs.<region>.<suffix>}.
   *
   * @param zone the leading zone name or zone id label, when there is one
   */
  public record MountTargetName(
      Optional<String> zone, String fileSystemId, String region, String suffix) {}

  private static final Pattern MOUNT_TARGET_NAME =
      Pattern.compile(
          "(?:(?<zone>[a-z0-9-]+)\\.)?(?<fs>fs-[0-9a-f]{8,40})\\.efs\\.(?<region>[a-z0-9-]+)"
              + "\\.(?<suffix>[a-z0-9.]+)");

  /** {@code name} read as a mount target's DNS name; empty when it has another shape. */
  public static Optional<MountTargetName> parse(String name) {
    Matcher m = MOUNT_TARGET_NAME.matcher(name);
    if (!m.matches()) {
      return Optional.empty();
    }
    return Optional.of(
        new MountTargetName(
            Optional.ofNullable(m.group("zone")),
            m.group("fs"),
            m.group("region"),
            m.group("suffix")));
  }
}
