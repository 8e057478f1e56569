package io.efscsi.controller.provision;

import io.efscsi.common.error.DriverException;
import io.efscsi.controller.cloud.Cloud.AccessPoint;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What the controller knows about one file system's access points: by client token, the GIDs in
 * use, the count against the limit, and reservations for creates in flight. Loaded from one
 * paginated listing, then kept in step with our own creates and deletes, so a CreateVolume costs
 * one CreateAccessPoint instead of a listing of every access point. All methods are synchronized:
 * allocation and the listing it is based on can never interleave with another create.
 */
final class FileSystemInventory {

  private final String fileSystemId;
  private final int limit;
  private final Map<String, AccessPoint> byId = new HashMap<>();
  private final Map<String, AccessPoint> byToken = new HashMap<>();
  private final Set<Reservation> outstanding = new HashSet<>();
  private GidAllocator gids;
  private long loadedAt;

  FileSystemInventory(
      String fileSystemId, int limit, Collection<AccessPoint> accessPoints, long loadedAt) {
    this.fileSystemId = fileSystemId;
    this.limit = limit;
    reload(accessPoints, loadedAt);
  }

  synchronized long loadedAt() {
    return loadedAt;
  }

  /** Replaces what is known with a fresh listing; reservations in flight are kept. */
  synchronized void reload(Collection<AccessPoint> accessPoints, long at) {
    byId.clear();
    byToken.clear();
    gids = new GidAllocator(fileSystemId);
    accessPoints.forEach(this::add);
    outstanding.forEach(r -> gids.use(r.gid));
    loadedAt = at;
  }

  synchronized Optional<AccessPoint> byToken(String token) {
    return Optional.ofNullable(byToken.get(token));
  }

  synchronized int size() {
    return byId.size();
  }

  /**
   * Reserves room for one more access point (and a GID from [min, max] when {@code allocateGid}):
   * checks the limit, counts the reservation; the caller then calls {@link #created} or {@link
   * #cancel}.
   */
  synchronized Reservation reserve(boolean allocateGid, long min, long max) {
    if (byId.size() + outstanding.size() >= limit) {
      throw DriverException.resourceExhausted(
          "file system %s has reached the access point limit of %d"
              + " (--max-access-points-per-file-system); delete unused volumes or use another"
              + " file system",
          fileSystemId, limit);
    }
    long gid = allocateGid ? gids.allocate(min, max) : -1;
    Reservation r = new Reservation(gid);
    outstanding.add(r);
    return r;
  }

  /** The access point was created (or found) for this reservation. */
  synchronized void created(Reservation r, AccessPoint ap) {
    release(r);
    if (!byId.containsKey(ap.id())) {
      add(ap);
    }
  }

  synchronized void cancel(Reservation r) {
    release(r);
  }

  synchronized void removed(String accessPointId) {
    AccessPoint ap = byId.remove(accessPointId);
    if (ap != null) {
      byToken.remove(ap.clientToken(), ap);
      gids.release(ap.gid());
    }
  }

  private void release(Reservation r) {
    if (outstanding.remove(r)) {
      if (r.gid >= 0) {
        gids.release(r.gid);
      }
    }
  }

  private void add(AccessPoint ap) {
    byId.put(ap.id(), ap);
    if (!ap.clientToken().isEmpty()) {
      byToken.put(ap.clientToken(), ap);
    }
    gids.use(ap.gid());
  }

  /** A slot (and maybe a GID) held for a create in flight. */
  static final class Reservation {
    final long gid;

    Reservation(long gid) {
      this.gid = gid;
    }
  }
}
