package io.efscsi.node.volume;

/**
 * EFS mount target DNS names: {@code fs-….efs.<region>.<suffix>} and the zone-prefixed {@code
 * <zone>.fs-….efs.<region>.<suffix>}, with the per-partition suffix efs-utils configures in its
 * {@code [mount.<region>]} sections.
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
}
