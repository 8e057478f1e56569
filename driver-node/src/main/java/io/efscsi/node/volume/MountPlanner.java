package io.efscsi.node.volume;

import io.efscsi.common.error.DriverException;
import io.efscsi.node.cloud.NodeMetadata;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The node's volume contract: turns a volume id, its volume attributes, the PV/StorageClass mount
 * options and the read-only flag into a {@link MountPlan}, with the Go driver's rules and messages
 * (docs/volumes.md) and our NFS defaults ({@link MountDefaults}). Pure apart from the resolver's
 * DNS and AWS lookups; warnings go to the log.
 *
 * <p>Rules beyond parsing each part: an access point in the handle and a different {@code
 * accesspoint=} option conflict; an access point always means TLS (as the Go driver, which adds
 * {@code tls} with it); {@code tls} with {@code encryptInTransit: "false"}, {@code notls} without
 * it, and {@code tls} with {@code notls} are errors; {@code iam} needs TLS; {@code awsprofile=},
 * {@code rolearn=} and {@code jwtpath=} need {@code iam}, and {@code rolearn=} goes with {@code
 * jwtpath=}; {@code crossaccount} cannot be combined with a mount target address.
 *
 * <p>An {@code s3files:} handle is an Amazon S3 Files volume: {@link S3FilesRules} and {@link
 * MountOptions#parse(List, boolean)} hold what is refused for it; it is always mounted with TLS and
 * IAM (as mount.s3files), its certificate signed for service {@code s3files}, through {@link
 * MountTargetResolver#resolveS3Files}, with NFS 4.2 unless the mount options name a version.
 */
public final class MountPlanner {

  private static final Logger LOG = LoggerFactory.getLogger(MountPlanner.class);

  private final MountDefaults defaults;
  private final NodeMetadata node;
  private final MountTargetResolver resolver;
  private final int mountTargetPort;

  /**
   * A planner for mount targets on the standard NFS port ({@link MountTargetResolver#NFS_PORT}).
   */
  public MountPlanner(MountDefaults defaults, NodeMetadata node, MountTargetResolver resolver) {
    this(defaults, node, resolver, MountTargetResolver.NFS_PORT);
  }

  /**
   * @param mountTargetPort the mount targets' NFS port ({@code --mount-target-port}: 2049, another
   *     one for tests and NFS gateways)
   */
  public MountPlanner(
      MountDefaults defaults,
      NodeMetadata node,
      MountTargetResolver resolver,
      int mountTargetPort) {
    this.defaults = defaults;
    this.node = node;
    this.resolver = resolver;
    this.mountTargetPort = mountTargetPort;
  }

  /**
   * The plan for one volume.
   *
   * @throws DriverException INVALID_ARGUMENT for a malformed or unsupported id, attribute or
   *     option; FAILED_PRECONDITION, NOT_FOUND or UNAVAILABLE when no mount target can be found
   */
  public MountPlan plan(
      String volumeId,
      Map<String, String> volumeContext,
      List<String> mountFlags,
      boolean readOnly) {
    VolumeContext ctx = VolumeContext.parse(volumeContext);
    VolumeHandle handle = VolumeHandle.parse(volumeId);
    boolean s3files = handle.type() == VolumeHandle.Type.S3FILES;
    if (s3files) {
      S3FilesRules.checkContext(ctx);
      if (handle.dnsName().isPresent()) {
        throw invalid(
            "volume ID '"
                + volumeId
                + "' names an S3 Files file system by the DNS name "
                + handle.dnsName().get()
                + ": an s3files: handle takes the file system id (fs-…)");
      }
    }
    MountOptions opts = MountOptions.parse(mountFlags, s3files);
    List<String> warnings = new ArrayList<>(opts.warnings());
    String fs = handle.fileSystemId();
    Optional<String> ap = accessPoint(handle, opts, warnings);
    // S3 Files: always TLS and IAM, as mount.s3files adds both (its mount targets require them).
    boolean tls = s3files || tls(ctx, opts, ap, warnings);
    boolean iam = s3files || opts.iam();
    MountPlan.IamCredentialsSource credentials = credentials(opts, tls, iam);
    if (!tls && (opts.caFile().isPresent() || opts.verify().isPresent())) {
      warnings.add("mount options cafile= and verify= ignored: the volume is mounted without TLS");
    }

    Optional<String> ip = opts.mountTargetIp().or(ctx::mountTargetIp);
    if (opts.mountTargetIp().isPresent()
        && ctx.mountTargetIp().isPresent()
        && !opts.mountTargetIp().equals(ctx.mountTargetIp())) {
      warnings.add(
          "mount option mounttargetip="
              + opts.mountTargetIp().get()
              + " overrides the volume attribute mounttargetip="
              + ctx.mountTargetIp().get());
    }
    boolean crossAccount = ctx.crossAccount() || opts.crossAccount();
    if (crossAccount && (ip.isPresent() || !ctx.mountTargetIpMap().isEmpty())) {
      throw invalid(
          "crossaccount cannot be combined with mounttargetip or mounttargetipmap: it names"
              + " the mount target by DNS");
    }
    String region = opts.region().orElseGet(node::region);
    Optional<String> az = opts.az();
    if (handle.dnsName().isPresent()) {
      az = zoneOfDnsName(volumeId, handle, region, opts);
    }
    MountTargetResolver.Request where =
        new MountTargetResolver.Request(
            fs,
            region,
            ip,
            ip.isPresent() ? new TreeMap<>() : ctx.mountTargetIpMap(),
            az,
            crossAccount,
            node.availabilityZone(),
            node.availabilityZoneId());
    MountTargetResolver.MountTarget target =
        s3files ? resolver.resolveS3Files(where, opts.azId()) : resolver.resolve(where);
    warnings.addAll(target.warnings());

    List<String> base =
        s3files ? S3FilesRules.nfsDefaults(defaults.nfsOptions()) : defaults.nfsOptions();
    List<String> nfs = NfsOptions.merge(base, opts.nfs());
    if (readOnly) {
      nfs = NfsOptions.merge(nfs, List.of("ro"));
    }
    for (String w : warnings) {
      LOG.warn("volume {}: {}", volumeId, w);
    }
    LOG.debug("volume {}: mount target {} ({})", volumeId, target.host(), target.how());
    return new MountPlan(
        fs,
        ap,
        handle.exportPath(),
        target.host(),
        mountTargetPort,
        tls,
        target.serverName(),
        iam,
        tls ? opts.caFile() : Optional.empty(),
        !tls || opts.verify().orElse(2) != 0,
        credentials,
        nfs,
        nfs.contains("ro"),
        s3files);
  }

  /**
   * A handle that names the file system by a mount target's DNS name (static PVs, accepted again by
   * the Go driver v3.5.0) is mounted as efs-utils mounts such a name: the name must be one of
   * {@code [<zone>.]fs-….efs.<region>.<suffix>} for the region the volume is mounted in (the
   * node's, or {@code region=}) and that region's DNS suffix; its zone label is the mount's {@code
   * az=}. Where the proxy connects then follows from the file system id, region and zone as for any
   * handle (the same name), and TLS checks the regional name. CNAMEs are not followed.
   *
   * @return the zone to mount in: the name's label, else {@code az=}
   */
  private static Optional<String> zoneOfDnsName(
      String volumeId, VolumeHandle handle, String region, MountOptions opts) {
    String name = handle.dnsName().orElseThrow();
    EfsDnsNames.MountTargetName n =
        EfsDnsNames.parse(name)
            .orElseThrow(() ->
                invalid(
                    "volume ID '"
                        + volumeId
                        + "' names the file system by "
                        + name
                        + ", which is not an EFS mount target name"
                        + " ([<zone>.]fs-….efs.<region>.<suffix>); CNAMEs are not followed: use the"
                        + " file system id "
                        + handle.fileSystemId()
                        + " or its mount target name"));
    if (!n.region().equals(region)) {
      throw invalid(
          "volume ID '"
              + volumeId
              + "' names a mount target in region "
              + n.region()
              + ", but the volume is mounted in region "
              + region
              + (opts.region().isPresent()
                  ? " (mount option region=)"
                  : " (the node's); to mount a file system of another region add the mount"
                      + " option region="
                      + n.region()));
    }
    String suffix = EfsDnsNames.suffix(region);
    if (!n.suffix().equals(suffix)) {
      throw invalid(
          "volume ID '"
              + volumeId
              + "' ends in "
              + n.suffix()
              + ", but mount targets in "
              + region
              + " are named *."
              + suffix);
    }
    if (n.zone().isPresent() && opts.az().isPresent() && !opts.az().equals(n.zone())) {
      throw invalid(
          "volume ID '"
              + volumeId
              + "' names a mount target in "
              + n.zone().get()
              + ", but the mount option az= is "
              + opts.az().get());
    }
    return n.zone().or(opts::az);
  }

  /** The handle's access point, or the deprecated {@code accesspoint=} option's. */
  private static Optional<String> accessPoint(
      VolumeHandle handle, MountOptions opts, List<String> warnings) {
    String fs = handle.fileSystemId();
    Optional<String> ap = handle.accessPointId();
    if (opts.accessPointId().isPresent()) {
      String moap = opts.accessPointId().get();
      if (ap.isPresent() && !ap.get().equals(moap)) {
        throw invalid(
            "Found conflicting access point IDs in mountOptions ("
                + moap
                + ") and volumeHandle ("
                + ap.get()
                + ")");
      }
      warnings.add(
          "Use of 'accesspoint' under mountOptions is deprecated with this driver. Specify the"
              + " access point in the volumeHandle instead, e.g. 'volumeHandle: "
              + fs
              + ":"
              + handle.subPath()
              + ":"
              + moap
              + "'");
      ap = Optional.of(moap);
    }
    return ap;
  }

  private static boolean tls(
      VolumeContext ctx, MountOptions opts, Optional<String> ap, List<String> warnings) {
    if (opts.tls() && opts.notls()) {
      throw invalid("Found both tls and notls in mountOptions");
    }
    if (opts.tls() && !ctx.encryptInTransit()) {
      throw invalid("Found tls in mountOptions but encryptInTransit is false");
    }
    if (opts.notls() && ctx.encryptInTransit()) {
      throw invalid(
          "Found notls in mountOptions but encryptInTransit is true (the default); set"
              + " encryptInTransit: \"false\" in volumeAttributes to mount without TLS");
    }
    if (opts.notls() && ap.isPresent()) {
      throw invalid(
          "Found notls in mountOptions but access point "
              + ap.get()
              + " is only reachable over TLS");
    }
    if (!ctx.encryptInTransit() && ap.isPresent()) {
      warnings.add(
          "encryptInTransit is false but access point "
              + ap.get()
              + " is only reachable over TLS: mounting with TLS");
    }
    return ctx.encryptInTransit() || ap.isPresent();
  }

  private static MountPlan.IamCredentialsSource credentials(
      MountOptions opts, boolean tls, boolean iam) {
    if (iam && !tls) {
      throw invalid("mount option iam needs TLS, but encryptInTransit is false");
    }
    boolean named =
        opts.awsProfile().isPresent() || opts.roleArn().isPresent() || opts.jwtPath().isPresent();
    if (named && !iam) {
      throw invalid("mount options awsprofile=, rolearn= and jwtpath= need the iam option");
    }
    if (opts.roleArn().isPresent() != opts.jwtPath().isPresent()) {
      throw invalid("mount options rolearn= and jwtpath= must be given together");
    }
    if (opts.awsProfile().isPresent() && opts.roleArn().isPresent()) {
      throw invalid("mount options awsprofile= and rolearn=/jwtpath= cannot be used together");
    }
    if (!named) {
      return MountPlan.IamCredentialsSource.DEFAULT_CHAIN;
    }
    return new MountPlan.IamCredentialsSource(opts.awsProfile(), opts.roleArn(), opts.jwtPath());
  }

  private static DriverException invalid(String message) {
    return new DriverException(DriverException.Kind.INVALID_ARGUMENT, message);
  }
}
