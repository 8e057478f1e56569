package io.efscsi.node.volume;

import io.efscsi.common.error.DriverException;
import io.efscsi.node.volume.MountTargetLookup.MountTargetDescription;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * Chooses where a volume's proxy connects and which name its TLS checks, in efs-utils' order:
 *
 * <ol>
 *   <li>{@code mounttargetip} (mount option, else attribute): that address;
 *   <li>{@code mounttargetipmap}: the address for the node's zone, else (with a warning, as the Go
 *       driver) the entry of the first zone by name;
 *   <li>{@code crossaccount}: {@code <zone-id>.fs-….efs.<region>.<suffix>} ({@code az=} or the
 *       node's zone id); it must resolve, there is no address fallback (another account's mount
 *       targets cannot be described);
 *   <li>{@code az=}: {@code <az>.fs-….efs.<region>.<suffix>};
 *   <li>otherwise {@code fs-….efs.<region>.<suffix>}.
 * </ol>
 *
 * A DNS name that does not resolve falls back to DescribeMountTargets: the available mount target
 * in the wanted zone ({@code az=} or the node's), else, when no zone was asked for explicitly, any
 * available one (with a warning). The TLS server name is always the regional name, whatever the
 * proxy connects to.
 *
 * <p>Amazon S3 Files ({@link #resolveS3Files}), as efs-utils' mount.s3files: {@code mounttargetip}
 * (or the node's {@code mounttargetipmap} entry), else {@code
 * <zone-id>.fs-….s3files.<region>.<suffix>} with the {@code azid=} option or the node's zone id,
 * which must resolve (mount.s3files has no mount target lookup to fall back on); the TLS server
 * name is {@code fs-….s3files.<region>.<suffix>}.
 */
public final class MountTargetResolver {

  /** The mount targets' NFS (and TLS) port. */
  public static final int NFS_PORT = 2049;

  private final HostResolver hosts;
  private final MountTargetLookup lookup;

  public MountTargetResolver(HostResolver hosts, MountTargetLookup lookup) {
    this.hosts = hosts;
    this.lookup = lookup;
  }

  /**
   * What to resolve.
   *
   * @param fileSystemId {@code fs-…}
   * @param region the file system's region
   * @param mountTargetIp an explicit address
   * @param mountTargetIpMap zone → address from the controller
   * @param az the {@code az=} option
   * @param crossAccount the {@code crossaccount} attribute or option
   * @param nodeZone the node's zone name
   * @param nodeZoneId the node's zone id, when metadata knows it
   */
  public record Request(
      String fileSystemId,
      String region,
      Optional<String> mountTargetIp,
      SortedMap<String, String> mountTargetIpMap,
      Optional<String> az,
      boolean crossAccount,
      Optional<String> nodeZone,
      Optional<String> nodeZoneId) {

    public Request {
      mountTargetIpMap = new TreeMap<>(mountTargetIpMap);
    }
  }

  /**
   * The choice.
   *
   * @param host the DNS name or address the proxy connects to (port {@link #NFS_PORT})
   * @param serverName the TLS server name, {@code fs-….efs.<region>.<suffix>}
   * @param how how the host was chosen, for the log
   * @param warnings what the operator should know
   */
  public record MountTarget(String host, String serverName, String how, List<String> warnings) {
    public MountTarget {
      warnings = List.copyOf(warnings);
    }
  }

  public MountTarget resolve(Request r) {
    String serverName = EfsDnsNames.regional(r.fileSystemId(), r.region());
    List<String> warnings = new ArrayList<>();
    if (r.mountTargetIp().isPresent()) {
      return new MountTarget(r.mountTargetIp().get(), serverName, "mounttargetip", warnings);
    }
    if (!r.mountTargetIpMap().isEmpty()) {
      return fromMap(r, serverName, warnings);
    }
    if (r.crossAccount()) {
      String zoneId = r.az().or(r::nodeZoneId).orElseGet(() -> nodeZoneId(r, "crossaccount"));
      String name = EfsDnsNames.zonal(zoneId, r.fileSystemId(), r.region());
      if (hosts.resolve(name).isEmpty()) {
        throw new DriverException(
            DriverException.Kind.FAILED_PRECONDITION,
            "crossaccount: the DNS name "
                + name
                + " does not resolve; cross-account mounts need it resolvable from the node"
                + " (for example a Route 53 private hosted zone), or use mounttargetip");
      }
      return new MountTarget(name, serverName, "cross-account DNS name " + name, warnings);
    }
    String name =
        r.az().map(az -> EfsDnsNames.zonal(az, r.fileSystemId(), r.region())).orElse(serverName);
    if (!hosts.resolve(name).isEmpty()) {
      return new MountTarget(name, serverName, "DNS name " + name, warnings);
    }
    return fromLookup(r, name, serverName, warnings);
  }

  /** Where an Amazon S3 Files volume's proxy connects; {@code azId} is the {@code azid=} option. */
  public MountTarget resolveS3Files(Request r, Optional<String> azId) {
    String serverName = EfsDnsNames.s3filesServerName(r.fileSystemId(), r.region());
    List<String> warnings = new ArrayList<>();
    if (r.mountTargetIp().isPresent()) {
      return new MountTarget(r.mountTargetIp().get(), serverName, "mounttargetip", warnings);
    }
    if (!r.mountTargetIpMap().isEmpty()) {
      return fromMap(r, serverName, warnings);
    }
    String zoneId = azId.or(r::nodeZoneId).orElseGet(() -> nodeZoneId(r, "an S3 Files mount"));
    String name = EfsDnsNames.s3filesZonal(zoneId, r.fileSystemId(), r.region());
    if (hosts.resolve(name).isEmpty()) {
      throw new DriverException(
          DriverException.Kind.FAILED_PRECONDITION,
          "Failed to resolve \""
              + name
              + "\" - check that your file system ID is correct, and ensure that the VPC has an"
              + " S3Files mount target for this file system ID (or set mounttargetip)");
    }
    return new MountTarget(name, serverName, "S3 Files DNS name " + name, warnings);
  }

  private static MountTarget fromMap(Request r, String serverName, List<String> warnings) {
    SortedMap<String, String> map = r.mountTargetIpMap();
    for (Optional<String> zone : List.of(r.nodeZone(), r.nodeZoneId())) {
      if (zone.isPresent() && map.containsKey(zone.get())) {
        return new MountTarget(
            map.get(zone.get()), serverName, "mounttargetipmap entry " + zone.get(), warnings);
      }
    }
    Map.Entry<String, String> any = map.entrySet().iterator().next();
    warnings.add(
        "mounttargetipmap has no entry for this node's zone "
            + r.nodeZone().orElse("(unknown)")
            + "; using the mount target of "
            + any.getKey()
            + " ("
            + any.getValue()
            + "), traffic crosses zones");
    return new MountTarget(
        any.getValue(), serverName, "mounttargetipmap entry " + any.getKey(), warnings);
  }

  private String nodeZoneId(Request r, String what) {
    String option = what.equals("crossaccount") ? "az=" : "azid=";
    String zone =
        r.nodeZone()
            .orElseThrow(() ->
                new DriverException(
                    DriverException.Kind.FAILED_PRECONDITION,
                    what
                        + " needs this node's availability zone, which node metadata"
                        + " does not know; give it with the "
                        + option
                        + " mount option"));
    return lookup
        .availabilityZoneId(r.region(), zone)
        .orElseThrow(() ->
            new DriverException(
                DriverException.Kind.FAILED_PRECONDITION,
                what + ": availability zone " + zone + " not found in region " + r.region()));
  }

  private MountTarget fromLookup(Request r, String name, String serverName, List<String> warnings) {
    List<MountTargetDescription> all =
        lookup.mountTargets(r.region(), r.fileSystemId()).stream()
            .sorted(Comparator.comparing(MountTargetDescription::mountTargetId))
            .toList();
    if (all.isEmpty()) {
      throw new DriverException(
          DriverException.Kind.FAILED_PRECONDITION,
          "the DNS name "
              + name
              + " does not resolve and file system "
              + r.fileSystemId()
              + " has no mount targets in "
              + r.region()
              + "; create one or set mounttargetip");
    }
    Optional<String> zone = r.az().or(r::nodeZone);
    List<MountTargetDescription> inZone =
        all.stream()
            .filter(mt ->
                zone.map(mt::inZone).orElse(false)
                    || (r.az().isEmpty() && r.nodeZoneId().map(mt::inZone).orElse(false)))
            .toList();
    Optional<MountTargetDescription> chosen =
        inZone.stream().filter(MountTargetDescription::available).findFirst();
    if (chosen.isEmpty() && r.az().isPresent()) {
      throw new DriverException(
          DriverException.Kind.UNAVAILABLE,
          "the DNS name "
              + name
              + " does not resolve and file system "
              + r.fileSystemId()
              + " has no available mount target in "
              + r.az().get()
              + describe(inZone));
    }
    if (chosen.isEmpty()) {
      chosen = all.stream().filter(MountTargetDescription::available).findFirst();
      chosen.ifPresent(mt ->
          warnings.add(
              "no available mount target of "
                  + r.fileSystemId()
                  + " in this node's zone "
                  + zone.orElse("(unknown)")
                  + "; using "
                  + mt.mountTargetId()
                  + " in "
                  + mt.availabilityZoneName()
                  + ", traffic crosses zones"));
    }
    MountTargetDescription mt =
        chosen.orElseThrow(() ->
            new DriverException(
                DriverException.Kind.UNAVAILABLE,
                "the DNS name "
                    + name
                    + " does not resolve and file system "
                    + r.fileSystemId()
                    + " has no available mount target"
                    + describe(all)));
    warnings.add(
        "the DNS name "
            + name
            + " does not resolve; connecting to mount target "
            + mt.mountTargetId()
            + " at "
            + mt.address().orElseThrow());
    return new MountTarget(
        mt.address().orElseThrow(),
        serverName,
        "DescribeMountTargets: " + mt.mountTargetId() + " in " + mt.availabilityZoneName(),
        warnings);
  }

  private static String describe(List<MountTargetDescription> mts) {
    if (mts.isEmpty()) {
      return "";
    }
    List<String> states = new ArrayList<>();
    for (MountTargetDescription mt : mts) {
      states.add(
          mt.mountTargetId()
              + " in "
              + mt.availabilityZoneName()
              + " is "
              + mt.lifeCycleState()
              + (mt.address().isEmpty() ? " without an address" : ""));
    }
    return " (" + String.join(", ", states) + ")";
  }
}
