package io.efscsi.controller.provision;

import io.efscsi.common.error.DriverException;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * A StorageClass's parameters, read with the Go driver's defaults, rules and messages
 * (docs/parameters.md). Unknown keys are ignored, as the Go driver ignores them.
 */
public record ProvisioningParameters(
    Backend backend,
    FileSystemRef fileSystem,
    String directoryPerms,
    OptionalLong uid,
    OptionalLong gid,
    long gidMin,
    long gidMax,
    String basePath,
    Optional<String> subPathPattern,
    boolean ensureUniqueDirectory,
    boolean reuseAccessPoint,
    Optional<String> az,
    boolean enforceZoneAffinity,
    boolean enableTagging,
    Optional<String> pvName,
    Optional<String> pvcName,
    Optional<String> pvcNamespace,
    Optional<OnDelete> onDelete) {

  public static final String PROVISIONING_MODE = "provisioningMode";
  public static final String FS_ID = "fileSystemId";
  public static final String FS_ID_CONFIG_REF = "fileSystemIdConfigRef";
  public static final String FS_ID_SECRET_REF = "fileSystemIdSecretRef";
  public static final String DIRECTORY_PERMS = "directoryPerms";
  public static final String UID = "uid";
  public static final String GID = "gid";
  public static final String GID_MIN = "gidRangeStart";
  public static final String GID_MAX = "gidRangeEnd";
  public static final String BASE_PATH = "basePath";
  public static final String SUB_PATH_PATTERN = "subPathPattern";
  public static final String ENSURE_UNIQUE_DIRECTORY = "ensureUniqueDirectory";
  public static final String REUSE_ACCESS_POINT = "reuseAccessPoint";
  public static final String AZ = "az";
  public static final String ENFORCE_ZONE_AFFINITY = "enforceZoneAffinity";
  public static final String ENABLE_TAGGING = "enableTagging";
  public static final String ON_DELETE = "onDelete";
  public static final String PV_NAME = "csi.storage.k8s.io/pv/name";
  public static final String PVC_NAME = "csi.storage.k8s.io/pvc/name";
  public static final String PVC_NAMESPACE = "csi.storage.k8s.io/pvc/namespace";

  public static final long DEFAULT_GID_MIN = 50_000;
  public static final long DEFAULT_GID_MAX = 60_000;
  private static final Pattern PERMS = Pattern.compile("[0-7]{3,4}");

  /** Which service the access points are made in: Amazon EFS or Amazon S3 Files. */
  public enum Backend {
    EFS("efs", "efs-ap"),
    S3FILES("s3files", "s3files-ap");

    /** The volume handle's type prefix and the Go driver's name of the file system type. */
    public final String type;

    /** The {@code provisioningMode} that selects it. */
    public final String mode;

    Backend(String type, String mode) {
      this.type = type;
      this.mode = mode;
    }
  }

  /** Where the file system id comes from: the literal parameter or a ConfigMap/Secret key. */
  public sealed interface FileSystemRef {
    record Literal(String id) implements FileSystemRef {}

    record ConfigMapKey(String namespace, String name, String key) implements FileSystemRef {}

    record SecretKey(String namespace, String name, String key) implements FileSystemRef {}
  }

  /**
   * Reads and validates the parameters.
   *
   * @throws DriverException INVALID_ARGUMENT with the Go driver's message for the first bad value
   */
  public static ProvisioningParameters parse(Map<String, String> p) {
    String mode = p.get(PROVISIONING_MODE);
    if (mode == null) {
      throw DriverException.invalidArgument("Missing %s parameter", PROVISIONING_MODE);
    }
    Backend backend =
        switch (mode) {
          case "efs-ap" -> Backend.EFS;
          case "s3files-ap" -> Backend.S3FILES;
          default ->
              throw DriverException.invalidArgument(
                  "Provisioning mode %s is not supported. Only Access point provisioning 'efs-ap'"
                      + " or 's3files-ap' are supported",
                  mode);
        };
    FileSystemRef fs = fileSystemRef(p);
    efsOnly(backend, p, REUSE_ACCESS_POINT);
    boolean reuse = bool(p, REUSE_ACCESS_POINT, false);
    OptionalLong uid = id(p, UID);
    OptionalLong gid = id(p, GID);
    long gidMin = 0;
    long gidMax = 0;
    if (p.containsKey(GID_MIN)) {
      gidMin = parseInt64(GID_MIN, p.get(GID_MIN));
      if (gidMin <= 0) {
        throw DriverException.invalidArgument("%s must be greater than 0", GID_MIN);
      }
    }
    if (p.containsKey(GID_MAX)) {
      if (gidMin == 0) {
        throw DriverException.invalidArgument("Missing %s parameter", GID_MIN);
      }
      gidMax = parseInt64(GID_MAX, p.get(GID_MAX));
      if (gidMax <= gidMin) {
        throw DriverException.invalidArgument("%s must be greater than %s", GID_MAX, GID_MIN);
      }
    } else if (gidMin != 0) {
      throw DriverException.invalidArgument("Missing %s parameter", GID_MAX);
    }
    if (gidMin == 0) {
      gidMin = DEFAULT_GID_MIN;
      gidMax = DEFAULT_GID_MAX;
    }
    efsOnly(backend, p, AZ);
    String perms = p.get(DIRECTORY_PERMS);
    if (perms == null) {
      throw DriverException.invalidArgument(
          "Missing %s parameter (the octal mode of each new access point directory, such as"
              + " 700)",
          DIRECTORY_PERMS);
    }
    if (!PERMS.matcher(perms).matches()) {
      throw DriverException.invalidArgument(
          "%s must be an octal mode of 3 or 4 digits such as 700, got '%s'",
          DIRECTORY_PERMS, perms);
    }
    String ensureUnique = p.get(ENSURE_UNIQUE_DIRECTORY);
    boolean tagging = bool(p, ENABLE_TAGGING, true);
    return new ProvisioningParameters(
        backend,
        fs,
        perms,
        uid,
        gid,
        gidMin,
        gidMax,
        p.getOrDefault(BASE_PATH, ""),
        Optional.ofNullable(p.get(SUB_PATH_PATTERN)),
        // Only a value that reads as false turns it off; anything unreadable counts as true.
        ensureUnique == null || !"false".equals(goBool(ensureUnique)),
        reuse,
        Optional.ofNullable(p.get(AZ)).filter(s -> !s.isBlank()),
        bool(p, ENFORCE_ZONE_AFFINITY, false),
        tagging,
        Optional.ofNullable(p.get(PV_NAME)).filter(s -> !s.isBlank()),
        Optional.ofNullable(p.get(PVC_NAME)).filter(s -> !s.isBlank()),
        Optional.ofNullable(p.get(PVC_NAMESPACE)).filter(s -> !s.isBlank()),
        onDelete(p, backend, tagging));
  }

  /**
   * {@code onDelete} (ours): delete, retain or archive, in any case. It is kept as a tag of the
   * access point (DeleteVolume sees no parameters), so it needs tagging; S3 Files directories are
   * never removed nor renamed, so there only retain is accepted.
   */
  private static Optional<OnDelete> onDelete(
      Map<String, String> p, Backend backend, boolean tagging) {
    String v = p.get(ON_DELETE);
    if (v == null) {
      return Optional.empty();
    }
    OnDelete d =
        OnDelete.read(v)
            .orElseThrow(() ->
                DriverException.invalidArgument(
                    "Invalid value for %s parameter: '%s' (expected delete, retain or archive)",
                    ON_DELETE, v));
    if (!tagging) {
      throw DriverException.invalidArgument(
          "%s %s needs enableTagging: the choice is kept as the access point's tag %s, and"
              + " enableTagging is false",
          ON_DELETE, v, Tags.ON_DELETE_KEY);
    }
    if (backend != Backend.EFS && d != OnDelete.RETAIN) {
      throw DriverException.invalidArgument(
          "%s %s is not supported for %s file systems: their directories are never removed nor"
              + " renamed; use retain or leave %s out",
          ON_DELETE, v, backend.type, ON_DELETE);
    }
    return Optional.of(d);
  }

  /** The Go driver refuses some parameters for S3 Files whatever their value. */
  private static void efsOnly(Backend backend, Map<String, String> p, String key) {
    if (backend != Backend.EFS && p.containsKey(key)) {
      throw DriverException.invalidArgument(
          "Parameter %s is only supported for EFS file systems, not supported for %s file"
              + " systems",
          key, backend.type);
    }
  }

  private static FileSystemRef fileSystemRef(Map<String, String> p) {
    String literal = p.getOrDefault(FS_ID, "").strip();
    String config = p.getOrDefault(FS_ID_CONFIG_REF, "").strip();
    String secret = p.getOrDefault(FS_ID_SECRET_REF, "").strip();
    int given =
        (literal.isEmpty() ? 0 : 1) + (config.isEmpty() ? 0 : 1) + (secret.isEmpty() ? 0 : 1);
    if (given > 1) {
      throw DriverException.invalidArgument(
          "Failed to resolve filesystem Id: only one of fileSystemId, fileSystemIdConfigRef, or"
              + " fileSystemIdSecretRef can be specified");
    }
    if (given == 0) {
      throw DriverException.invalidArgument(
          "Failed to resolve filesystem Id: one of fileSystemId, fileSystemIdConfigRef, or"
              + " fileSystemIdSecretRef must be specified");
    }
    if (!literal.isEmpty()) {
      return new FileSystemRef.Literal(literal);
    }
    String kind = config.isEmpty() ? FS_ID_SECRET_REF : FS_ID_CONFIG_REF;
    String ref = config.isEmpty() ? secret : config;
    String[] parts = ref.split("/", -1);
    if (parts.length != 3) {
      throw DriverException.invalidArgument(
          "Failed to resolve filesystem Id: invalid %s reference: invalid reference format,"
              + " expected namespace/name/key, got: %s",
          kind, ref);
    }
    String ns = parts[0].strip();
    String name = parts[1].strip();
    String key = parts[2].strip();
    if (ns.isEmpty() || name.isEmpty() || key.isEmpty()) {
      throw DriverException.invalidArgument(
          "Failed to resolve filesystem Id: invalid %s reference: namespace, name, and key must"
              + " be non-empty in reference: %s",
          kind, ref);
    }
    return config.isEmpty()
        ? new FileSystemRef.SecretKey(ns, name, key)
        : new FileSystemRef.ConfigMapKey(ns, name, key);
  }

  private static OptionalLong id(Map<String, String> p, String key) {
    if (!p.containsKey(key)) {
      return OptionalLong.empty();
    }
    long v = parseInt64(key, p.get(key));
    if (v < 0) {
      throw DriverException.invalidArgument("%s must be greater or equal than 0", key);
    }
    return OptionalLong.of(v);
  }

  /** Go's strconv.ParseInt(s, 10, 64), with its error text. */
  static long parseInt64(String key, String s) {
    String digits = s.startsWith("+") || s.startsWith("-") ? s.substring(1) : s;
    if (digits.isEmpty() || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw DriverException.invalidArgument(
          "Failed to parse invalid %s: strconv.ParseInt: parsing \"%s\": invalid syntax", key, s);
    }
    try {
      return Long.parseLong(s);
    } catch (NumberFormatException e) {
      throw DriverException.invalidArgument(
          "Failed to parse invalid %s: strconv.ParseInt: parsing \"%s\": value out of range",
          key, s);
    }
  }

  private static boolean bool(Map<String, String> p, String key, boolean dflt) {
    String v = p.get(key);
    if (v == null) {
      return dflt;
    }
    String b = goBool(v);
    if (b == null) {
      throw DriverException.invalidArgument("Invalid value for %s parameter", key);
    }
    return b.equals("true");
  }

  /** Go's strconv.ParseBool: "true", "false", or null when it does not parse. */
  static String goBool(String v) {
    return switch (v) {
      case "1", "t", "T", "TRUE", "true", "True" -> "true";
      case "0", "f", "F", "FALSE", "false", "False" -> "false";
      default -> null;
    };
  }
}
