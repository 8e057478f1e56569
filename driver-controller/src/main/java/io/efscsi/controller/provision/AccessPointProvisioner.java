package io.efscsi.controller.provision;

import io.efscsi.common.error.DriverException;
import io.efscsi.controller.cloud.Cloud;
import io.efscsi.controller.cloud.Cloud.AccessPoint;
import io.efscsi.controller.cloud.Cloud.AccessPointRequest;
import io.efscsi.controller.cloud.CloudException;
import io.efscsi.controller.cloud.CloudSource;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Dynamic provisioning: one EFS access point per volume. A create first looks its client token up
 * in the file system's inventory (a retry finds its access point without calling AWS), then
 * reserves a slot and a GID under the file system's lock, and makes one CreateAccessPoint call.
 */
public final class AccessPointProvisioner {

  private static final Logger log = LoggerFactory.getLogger(AccessPointProvisioner.class);

  /** What CreateVolume answers. {@code zone} is set for One Zone file systems under affinity. */
  public record Created(
      String volumeId, long capacityBytes, Map<String, String> context, Optional<String> zone) {}

  private final CloudSource clouds;
  private final FileSystemIds fileSystemIds;
  private final Tags flagTags;
  private final int limit;
  private final Inventories inventories;
  private final MountTargets mountTargets = new MountTargets();
  private final Map<String, Optional<String>> zones = new ConcurrentHashMap<>();

  private final RootDirectoryDisposal disposal;

  public AccessPointProvisioner(
      CloudSource clouds, FileSystemIds fileSystemIds, Tags flagTags, int limit, Duration refresh) {
    this(clouds, fileSystemIds, flagTags, limit, refresh, Optional.empty(), "");
  }

  /**
   * @param remover present with {@code --delete-access-point-root-dir}: DeleteVolume removes (or,
   *     as the volume's onDelete says, archives or keeps) the access point's root directory through
   *     it before deleting the access point
   * @param region the region of the file systems (for the remover's mounts)
   */
  public AccessPointProvisioner(
      CloudSource clouds,
      FileSystemIds fileSystemIds,
      Tags flagTags,
      int limit,
      Duration refresh,
      Optional<DirectoryRemover> remover,
      String region) {
    this.clouds = clouds;
    this.fileSystemIds = fileSystemIds;
    this.flagTags = flagTags;
    this.limit = limit;
    this.inventories = new Inventories(limit, refresh, System::nanoTime);
    this.disposal = new RootDirectoryDisposal(remover, region);
  }

  public Created create(
      String name,
      long capacityBytes,
      Map<String, String> parameters,
      Map<String, String> secrets) {
    ProvisioningParameters p = ProvisioningParameters.parse(parameters);
    disposal.checkHonoured(name, p.onDelete());
    if (!p.enableTagging() && !flagTags.values().isEmpty()) {
      throw DriverException.invalidArgument(
          "enableTagging is false but the controller has --tags %s: access points would be"
              + " created without them; remove --tags or enable tagging",
          flagTags.values().keySet());
    }
    CrossAccount xa = CrossAccount.parse(secrets);
    boolean s3files = p.backend() == ProvisioningParameters.Backend.S3FILES;
    Cloud cloud = xa.cloud(clouds, s3files, name);
    String fsId = fileSystemIds.resolve(p.fileSystem());
    String token = p.reuseAccessPoint() ? reuseToken(p, fsId) : clientToken(name);
    FileSystemInventory inventory = inventories.get(cloud, fsId);

    Optional<AccessPoint> existing = inventory.byToken(token);
    if (existing.isEmpty() && p.reuseAccessPoint()) {
      existing = inventory.byToken(GoMadeAccessPoints.token(p));
      existing.ifPresent(a -> GoMadeAccessPoints.checkBelongs(a, p, name));
    }
    AccessPoint ap;
    if (existing.isPresent()) {
      ap = existing.get();
      checkExisting(ap, p, name, capacityBytes);
      log.debug("{}: access point {} already exists for token {}", name, ap.id(), token);
    } else {
      ap = createAccessPoint(cloud, inventory, name, capacityBytes, token, fsId, p);
    }
    Optional<String> zone = p.enforceZoneAffinity() ? zone(cloud, fsId) : Optional.empty();
    return new Created(
        VolumeId.format(p.backend().type, fsId, ap.id()),
        capacityBytes,
        // S3 Files volumes carry no mount target attributes (no cross-account, no az).
        s3files ? Map.of() : mountTargets.volumeContext(cloud, xa, fsId, p.az()),
        zone);
  }

  private AccessPoint createAccessPoint(
      Cloud cloud,
      FileSystemInventory inventory,
      String name,
      long capacityBytes,
      String token,
      String fsId,
      ProvisioningParameters p) {
    String path = AccessPointPath.of(p, name);
    long gidMax = p.gidMax();
    if (gidMax - p.gidMin() > limit) {
      log.warn(
          "GID range {}-{} is wider than the access point limit {}; using {}-{}",
          p.gidMin(),
          p.gidMax(),
          limit,
          p.gidMin(),
          p.gidMin() + limit);
      gidMax = p.gidMin() + limit;
    }
    boolean allocate = p.uid().isEmpty() || p.gid().isEmpty();
    FileSystemInventory.Reservation r = inventory.reserve(allocate, p.gidMin(), gidMax);
    long uid = p.uid().orElse(r.gid);
    long gid = p.gid().orElse(r.gid);
    AccessPointRequest request =
        new AccessPointRequest(
            token, fsId, uid, gid, path, p.directoryPerms(), tags(p, capacityBytes));
    try {
      AccessPoint ap = cloud.createAccessPoint(request);
      inventory.created(r, ap);
      log.info(
          "{}: created access point {} on {} at {} (uid {}, gid {})",
          name,
          ap.id(),
          fsId,
          path,
          uid,
          gid);
      return ap;
    } catch (CloudException e) {
      Optional<AccessPoint> adopted = adoptable(cloud, e, token, fsId, p, name);
      if (adopted.isPresent()) {
        inventory.created(r, adopted.get());
        checkExisting(adopted.get(), p, name, capacityBytes);
        return adopted.get();
      }
      inventory.cancel(r);
      throw e;
    } catch (RuntimeException e) {
      inventory.cancel(r);
      throw e;
    }
  }

  /**
   * An AccessPointAlreadyExists for our own token (an earlier attempt whose answer was lost, or an
   * access point the inventory has not seen yet): the existing access point is the answer. S3 Files
   * listings carry no client token; there the conflicting access point (named by the
   * ConflictException) is ours when its root is the one this volume would get.
   */
  private static Optional<AccessPoint> adoptable(
      Cloud cloud,
      CloudException e,
      String token,
      String fsId,
      ProvisioningParameters p,
      String name) {
    if (e.reason() != CloudException.Reason.ALREADY_EXISTS || e.existingId().isEmpty()) {
      return Optional.empty();
    }
    boolean s3files = p.backend() == ProvisioningParameters.Backend.S3FILES;
    return cloud
        .describeAccessPoint(fsId, e.existingId().get())
        .filter(a ->
            a.fileSystemId().equals(fsId)
                && (s3files
                    ? AccessPointPath.proposes(p, name, a.rootPath())
                    : a.clientToken().equals(token)));
  }

  private Map<String, String> tags(ProvisioningParameters p, long capacityBytes) {
    Map<String, String> tags = new LinkedHashMap<>();
    if (!p.enableTagging()) {
      return tags;
    }
    tags.put(Tags.CLUSTER_KEY, "true");
    if (capacityBytes > 0) {
      tags.put(Tags.CAPACITY_KEY, Long.toString(capacityBytes));
    }
    tags.putAll(flagTags.values());
    p.onDelete().ifPresent(d -> tags.put(Tags.ON_DELETE_KEY, d.value()));
    p.pvName().ifPresent(v -> tags.put(Tags.PV_NAME_KEY, v));
    p.pvcName().ifPresent(v -> tags.put(Tags.PVC_NAME_KEY, v));
    p.pvcNamespace().ifPresent(v -> tags.put(Tags.PVC_NAMESPACE_KEY, v));
    String base = AccessPointPath.clean("/" + p.basePath());
    if (!base.equals("/")) {
      if (Tags.validValue(base)) {
        tags.put(Tags.BASE_PATH_KEY, base);
      } else {
        log.warn(
            "basePath {} has characters an EFS tag cannot carry: the access point is not tagged"
                + " with it, and --delete-access-point-root-dir only knows it is not /",
            base);
      }
    }
    return tags;
  }

  /**
   * An access point found for the request's client token must be the one this request would make
   * (CSI: a CreateVolume with an existing name but other parameters or capacity is ALREADY_EXISTS,
   * as the Go driver's validateExistingAccessPoint answers). With reuseAccessPoint the token is the
   * PVC's, so only the parameters that make the access point usable are compared.
   */
  private static void checkExisting(
      AccessPoint ap, ProvisioningParameters p, String name, long capacityBytes) {
    checkReusable(ap, p);
    if (p.reuseAccessPoint()) {
      return;
    }
    String why = null;
    String capacity = ap.tags().get(Tags.CAPACITY_KEY);
    if (!AccessPointPath.proposes(p, name, ap.rootPath())) {
      why = "its root " + ap.rootPath() + " is not " + AccessPointPath.of(p, name);
    } else if (p.uid().isEmpty() && (ap.uid() < p.gidMin() || ap.uid() > p.gidMax())) {
      why = "its uid " + ap.uid() + " is outside " + p.gidMin() + "-" + p.gidMax();
    } else if (capacity != null && !capacity.equals(Long.toString(capacityBytes))) {
      why =
          "it was created for a capacity of "
              + capacity
              + " bytes, this request asks for "
              + capacityBytes;
    }
    if (why != null) {
      throw DriverException.alreadyExists(
          "volume %s already exists with other parameters: access point %s: %s",
          name, ap.id(), why);
    }
  }

  private static void checkReusable(AccessPoint ap, ProvisioningParameters p) {
    String base = AccessPointPath.clean("/" + p.basePath());
    String why = null;
    if (!(ap.rootPath().equals(base)
        || ap.rootPath().startsWith(base.equals("/") ? "/" : base + "/"))) {
      why = "its root " + ap.rootPath() + " is not under basePath " + base;
    } else if (p.uid().isPresent() && p.uid().getAsLong() != ap.uid()) {
      why = "its uid " + ap.uid() + " is not " + p.uid().getAsLong();
    } else if (p.gid().isPresent() && p.gid().getAsLong() != ap.gid()) {
      why = "its gid " + ap.gid() + " is not " + p.gid().getAsLong();
    } else if (p.gid().isEmpty() && (ap.gid() < p.gidMin() || ap.gid() > p.gidMax())) {
      why = "its gid " + ap.gid() + " is outside " + p.gidMin() + "-" + p.gidMax();
    }
    if (why != null) {
      throw DriverException.alreadyExists("Invalid existing access point %s: %s", ap.id(), why);
    }
  }

  private Optional<String> zone(Cloud cloud, String fsId) {
    String key = cloud.identity() + "/" + fsId;
    Optional<String> z = zones.get(key);
    if (z == null) {
      z = cloud.describeFileSystem(fsId).availabilityZone();
      zones.put(key, z);
    }
    return z;
  }

  /**
   * Deletes the volume's access point. Handles that do not parse or carry no access point are a
   * success (nothing of ours to delete), as is an access point that is already gone.
   */
  public void delete(String volumeId, Map<String, String> secrets) {
    delete(volumeId, secrets, Duration.ofMinutes(5));
  }

  /**
   * Deletes the volume's access point, first removing or archiving its root directory as its
   * onDelete (or {@code --delete-access-point-root-dir}) says ({@link RootDirectoryDisposal}),
   * waiting for that at most {@code wait} (ABORTED after that: a retry joins the removal still
   * running).
   */
  public void delete(String volumeId, Map<String, String> secrets, Duration wait) {
    VolumeId id;
    try {
      id = VolumeId.parse(volumeId);
    } catch (DriverException e) {
      log.info(
          "DeleteVolume {}: not a volume id of ours ({}), nothing to delete",
          volumeId,
          e.getMessage());
      return;
    }
    if (id.accessPointId().isEmpty()) {
      log.info("DeleteVolume {}: no access point in the id, nothing to delete", volumeId);
      return;
    }
    Cloud cloud = CrossAccount.parse(secrets).cloud(clouds, id.s3files(), volumeId);
    String ap = id.accessPointId().get();
    boolean deleted = disposal.dispose(cloud, volumeId, id, wait) && cloud.deleteAccessPoint(ap);
    FileSystemInventory inventory = inventories.loaded(cloud, id.fileSystemId());
    if (inventory != null) {
      inventory.removed(ap);
    }
    log.info(
        "DeleteVolume {}: access point {}", volumeId, deleted ? "deleted" : "was already gone");
  }

  /** Whether the volume's access point (or file system, for handles without one) exists. */
  public boolean exists(VolumeId id, Map<String, String> secrets) {
    Cloud cloud = CrossAccount.parse(secrets).cloud(clouds, id.s3files(), id.toString());
    if (id.accessPointId().isPresent()) {
      return cloud
          .describeAccessPoint(id.fileSystemId(), id.accessPointId().get())
          .filter(a -> a.fileSystemId().equals(id.fileSystemId()))
          .isPresent();
    }
    try {
      cloud.describeFileSystem(id.fileSystemId());
      return true;
    } catch (CloudException e) {
      if (e.reason() == CloudException.Reason.FILE_SYSTEM_NOT_FOUND) {
        return false;
      }
      throw e;
    }
  }

  /** ControllerExpandVolume ({@link VolumeExpansion}). */
  public long expand(String handle, VolumeId id, long requiredBytes, Map<String, String> secrets) {
    return new VolumeExpansion(clouds, this::exists).expand(handle, id, requiredBytes, secrets);
  }

  /** The PV name, or its SHA-256 when longer than the 64 characters a client token may have. */
  static String clientToken(String name) {
    return name.length() <= 64 ? name : sha256(name);
  }

  /**
   * reuseAccessPoint's token, scoped to namespace, PVC name and file system (the Go driver hashes
   * the PVC name alone, so two namespaces with the same PVC name share one access point).
   */
  static String reuseToken(ProvisioningParameters p, String fsId) {
    if (p.pvcName().isEmpty() || p.pvcNamespace().isEmpty()) {
      throw DriverException.invalidArgument(
          "reuseAccessPoint needs the %s and %s parameters: run csi-provisioner with"
              + " --extra-create-metadata",
          ProvisioningParameters.PVC_NAME, ProvisioningParameters.PVC_NAMESPACE);
    }
    return sha256(
        "efs-csi-java/reuse/v1\n"
            + p.pvcNamespace().get()
            + "\n"
            + p.pvcName().get()
            + "\n"
            + fsId);
  }

  static String sha256(String s) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }
}
