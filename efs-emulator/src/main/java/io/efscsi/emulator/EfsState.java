package io.efscsi.emulator;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The emulated accounts' EFS resources, with AWS semantics: access points belong to a file system
 * of one account, client tokens are idempotent per account, the per-file-system access point limit
 * holds, listings page in a stable order. Every method is called under the emulator's lock.
 */
final class EfsState {

  /** An EFS error as AWS returns it: HTTP status, error code, message, extra body fields. */
  static final class EfsError extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final int status;
    final String code;
    final transient Map<String, String> extra;

    EfsError(int status, String code, String message) {
      this(status, code, message, Map.of());
    }

    EfsError(int status, String code, String message, Map<String, String> extra) {
      super(message);
      this.status = status;
      this.code = code;
      this.extra = extra;
    }
  }

  record PosixUser(long uid, long gid) {}

  record RootDirectory(String path, long ownerUid, long ownerGid, String permissions) {}

  record AccessPoint(
      String id,
      String fileSystemId,
      String account,
      String clientToken,
      PosixUser posixUser,
      RootDirectory root,
      Map<String, String> tags) {

    boolean sameRequest(String fs, PosixUser user, RootDirectory dir) {
      return fileSystemId.equals(fs) && Objects.equals(posixUser, user) && root.equals(dir);
    }
  }

  record MountTarget(String id, String fileSystemId, String az, String ip) {}

  static final class FileSystem {
    final String id;
    final String account;
    final Optional<String> oneZoneAz;
    final NavigableMap<String, AccessPoint> accessPoints = new TreeMap<>();
    final List<MountTarget> mountTargets = new ArrayList<>();

    FileSystem(String id, String account, Optional<String> oneZoneAz) {
      this.id = id;
      this.account = account;
      this.oneZoneAz = oneZoneAz;
    }
  }

  private final Map<String, FileSystem> fileSystems = new HashMap<>();
  private final Map<String, AccessPoint> accessPoints = new HashMap<>();
  private final Map<String, String> tokens = new HashMap<>();
  int accessPointLimit = 10_000;

  FileSystem createFileSystem(String account, Optional<String> oneZoneAz) {
    String id = "fs-" + hex(17);
    FileSystem fs = new FileSystem(id, account, oneZoneAz);
    fileSystems.put(id, fs);
    return fs;
  }

  MountTarget addMountTarget(String fileSystemId, String az, String ip) {
    FileSystem fs = fileSystems.get(fileSystemId);
    if (fs == null) {
      throw new IllegalArgumentException("no file system " + fileSystemId);
    }
    MountTarget mt = new MountTarget("fsmt-" + hex(17), fileSystemId, az, ip);
    fs.mountTargets.add(mt);
    return mt;
  }

  FileSystem fileSystem(String account, String id) {
    FileSystem fs = fileSystems.get(id);
    if (fs == null || !fs.account.equals(account)) {
      throw new EfsError(404, "FileSystemNotFound", "File system '" + id + "' does not exist.");
    }
    return fs;
  }

  List<FileSystem> fileSystems(String account) {
    return fileSystems.values().stream()
        .filter(f -> f.account.equals(account))
        .sorted((a, b) -> a.id.compareTo(b.id))
        .toList();
  }

  AccessPoint create(
      String account,
      String clientToken,
      String fileSystemId,
      PosixUser user,
      RootDirectory dir,
      Map<String, String> tags) {
    String tokenKey = account + "/" + clientToken;
    String existingId = tokens.get(tokenKey);
    if (existingId != null) {
      AccessPoint existing = accessPoints.get(existingId);
      if (existing.sameRequest(fileSystemId, user, dir)) {
        return existing;
      }
      throw new EfsError(
          409,
          "AccessPointAlreadyExists",
          "Access point with client token '" + clientToken + "' already exists.",
          Map.of("AccessPointId", existingId));
    }
    FileSystem fs = fileSystem(account, fileSystemId);
    if (fs.accessPoints.size() >= accessPointLimit) {
      throw new EfsError(
          403,
          "AccessPointLimitExceeded",
          "You have reached the maximum number of access points ("
              + accessPointLimit
              + ") for file system "
              + fileSystemId
              + ".");
    }
    AccessPoint ap =
        new AccessPoint(
            "fsap-" + hex(17), fileSystemId, account, clientToken, user, dir, Map.copyOf(tags));
    fs.accessPoints.put(ap.id(), ap);
    accessPoints.put(ap.id(), ap);
    tokens.put(tokenKey, ap.id());
    return ap;
  }

  AccessPoint accessPoint(String account, String id) {
    AccessPoint ap = accessPoints.get(id);
    if (ap == null || !ap.account().equals(account)) {
      throw new EfsError(404, "AccessPointNotFound", "Access point '" + id + "' does not exist.");
    }
    return ap;
  }

  /** TagResource on an access point: adds or replaces {@code tags}, keeps the others. */
  AccessPoint tag(String account, String id, Map<String, String> tags) {
    AccessPoint ap = accessPoint(account, id);
    Map<String, String> merged = new java.util.LinkedHashMap<>(ap.tags());
    merged.putAll(tags);
    AccessPoint tagged =
        new AccessPoint(
            ap.id(),
            ap.fileSystemId(),
            ap.account(),
            ap.clientToken(),
            ap.posixUser(),
            ap.root(),
            Map.copyOf(merged));
    accessPoints.put(id, tagged);
    fileSystems.get(ap.fileSystemId()).accessPoints.put(id, tagged);
    return tagged;
  }

  void delete(String account, String id) {
    AccessPoint ap = accessPoint(account, id);
    accessPoints.remove(id);
    fileSystems.get(ap.fileSystemId()).accessPoints.remove(id);
    tokens.remove(account + "/" + ap.clientToken());
  }

  /** One page of a file system's access points, in id order, starting at {@code fromId}. */
  Page page(String account, String fileSystemId, Optional<String> fromId, int max) {
    FileSystem fs = fileSystem(account, fileSystemId);
    NavigableMap<String, AccessPoint> tail =
        fromId.isPresent() ? fs.accessPoints.tailMap(fromId.get(), true) : fs.accessPoints;
    List<AccessPoint> items = new ArrayList<>(Math.min(max, tail.size()));
    String next = null;
    for (AccessPoint ap : tail.values()) {
      if (items.size() == max) {
        next = ap.id();
        break;
      }
      items.add(ap);
    }
    return new Page(items, Optional.ofNullable(next));
  }

  record Page(List<AccessPoint> items, Optional<String> next) {}

  int accessPointCount(String fileSystemId) {
    FileSystem fs = fileSystems.get(fileSystemId);
    return fs == null ? 0 : fs.accessPoints.size();
  }

  List<AccessPoint> accessPoints(String fileSystemId) {
    FileSystem fs = fileSystems.get(fileSystemId);
    return fs == null ? List.of() : List.copyOf(fs.accessPoints.values());
  }

  static String hex(int n) {
    StringBuilder b = new StringBuilder(n);
    ThreadLocalRandom r = ThreadLocalRandom.current();
    for (int i = 0; i < n; i++) {
      b.append(Character.forDigit(r.nextInt(16), 16));
    }
    return b.toString();
  }
}
