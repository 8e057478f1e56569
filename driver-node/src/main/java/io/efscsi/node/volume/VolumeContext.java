package io.efscsi.node.volume;

import io.efscsi.common.error.DriverException;
import io.efscsi.proxy.json.Json;
import java.util.Collections;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * A PV's {@code volumeAttributes} (the CSI volume context), parsed as the Go driver's
 * NodePublishVolume does. Keys are compared case-insensitively:
 *
 * <ul>
 *   <li>{@code encryptInTransit}: Go bool, default true;
 *   <li>{@code mounttargetip}: an IPv4/IPv6 literal (never resolved through DNS);
 *   <li>{@code mounttargetipmap}: a JSON object of availability zone to IP literal, written by the
 *       controller (read with the supervisor's small JSON reader); every entry is checked, not only
 *       this node's (a comma in any value would be an injected mount option);
 *   <li>{@code crossaccount}: Go bool;
 *   <li>{@code storage.kubernetes.io/csiProvisionerIdentity} and {@code csiProvisionerIdentity}:
 *       ignored;
 *   <li>what kubelet adds at NodePublishVolume with {@code podInfoOnMount} ({@code
 *       csi.storage.k8s.io/pod.name}, {@code pod.namespace}, {@code pod.uid}, {@code
 *       serviceAccount.name}): ignored for the mount ({@link #podRef} reads them for events);
 *   <li>{@code csi.storage.k8s.io/ephemeral}: Go bool; {@code true} (an inline CSI volume in a pod
 *       spec) is INVALID_ARGUMENT: the driver mounts persistent volumes only.
 * </ul>
 *
 * Anything else, including the removed {@code path}, is INVALID_ARGUMENT {@code "Volume context
 * property X not supported."}. Two keys that differ only in case are accepted when their values
 * agree and refused when they do not (the Go driver would pick one at random).
 *
 * @param encryptInTransit TLS to the mount target
 * @param mountTargetIp the mount target address to connect to
 * @param mountTargetIpMap availability zone → mount target address, sorted by zone
 * @param crossAccount use the zone-id-prefixed DNS name (cross-account or cross-VPC mounts)
 */
public record VolumeContext(
    boolean encryptInTransit,
    Optional<String> mountTargetIp,
    SortedMap<String, String> mountTargetIpMap,
    boolean crossAccount) {

  /** Pod information kubelet adds to NodePublishVolume's volume context with podInfoOnMount. */
  public static final String POD_NAME = "csi.storage.k8s.io/pod.name";

  public static final String POD_NAMESPACE = "csi.storage.k8s.io/pod.namespace";
  public static final String POD_UID = "csi.storage.k8s.io/pod.uid";
  public static final String SERVICE_ACCOUNT_NAME = "csi.storage.k8s.io/serviceAccount.name";
  public static final String EPHEMERAL = "csi.storage.k8s.io/ephemeral";

  public static final VolumeContext DEFAULT =
      new VolumeContext(true, Optional.empty(), new TreeMap<>(), false);

  public VolumeContext {
    mountTargetIpMap = Collections.unmodifiableSortedMap(new TreeMap<>(mountTargetIpMap));
  }

  /** Parses the attributes; INVALID_ARGUMENT naming the property and value when one is wrong. */
  public static VolumeContext parse(Map<String, String> attributes) {
    Map<String, Map.Entry<String, String>> byKey = new HashMap<>();
    for (Map.Entry<String, String> e : new TreeMap<>(attributes).entrySet()) {
      String key = e.getKey().toLowerCase(Locale.ROOT);
      Map.Entry<String, String> seen = byKey.putIfAbsent(key, e);
      if (seen != null && !seen.getValue().equals(e.getValue())) {
        throw invalid(
            "Volume context properties "
                + seen.getKey()
                + " and "
                + e.getKey()
                + " are the same property with different values ("
                + GoSyntax.quote(seen.getValue())
                + ", "
                + GoSyntax.quote(e.getValue())
                + ")");
      }
    }
    boolean encrypt = true;
    boolean crossAccount = false;
    Optional<String> ip = Optional.empty();
    SortedMap<String, String> ipMap = new TreeMap<>();
    for (Map.Entry<String, String> e : new TreeMap<>(byKey).values()) {
      String k = e.getKey();
      String v = e.getValue();
      switch (k.toLowerCase(Locale.ROOT)) {
        case "storage.kubernetes.io/csiprovisioneridentity", "csiprovisioneridentity" -> {}
        case "csi.storage.k8s.io/pod.name",
            "csi.storage.k8s.io/pod.namespace",
            "csi.storage.k8s.io/pod.uid",
            "csi.storage.k8s.io/serviceaccount.name" -> {}
        case "csi.storage.k8s.io/ephemeral" -> checkPersistent(k, v);
        case "encryptintransit" -> encrypt = bool(k, v);
        case "crossaccount" -> crossAccount = bool(k, v);
        case "mounttargetip" -> {
          if (!GoSyntax.isIpLiteral(v)) {
            throw invalid(
                "Volume context property "
                    + GoSyntax.quote(k)
                    + "="
                    + GoSyntax.quote(v)
                    + " is not a valid IP address");
          }
          ip = Optional.of(v);
        }
        case "mounttargetipmap" -> ipMap = ipMap(k, v);
        default -> throw invalid("Volume context property " + k + " not supported.");
      }
    }
    return new VolumeContext(encrypt, ip, ipMap, crossAccount);
  }

  /**
   * The pod a NodePublishVolume is for, when kubelet names it (namespace, name and uid all given);
   * INVALID_ARGUMENT for an inline ephemeral volume ({@code csi.storage.k8s.io/ephemeral=true}).
   * Only these keys are read: the PV's own attributes were checked at NodeStageVolume.
   */
  public static Optional<PodRef> podRef(Map<String, String> volumeContext) {
    for (Map.Entry<String, String> e : volumeContext.entrySet()) {
      if (e.getKey().equalsIgnoreCase(EPHEMERAL)) {
        checkPersistent(e.getKey(), e.getValue());
      }
    }
    String namespace = volumeContext.getOrDefault(POD_NAMESPACE, "");
    String name = volumeContext.getOrDefault(POD_NAME, "");
    String uid = volumeContext.getOrDefault(POD_UID, "");
    if (namespace.isBlank() || name.isBlank() || uid.isBlank()) {
      return Optional.empty();
    }
    return Optional.of(new PodRef(namespace, name, uid));
  }

  private static void checkPersistent(String key, String value) {
    if (bool(key, value)) {
      throw invalid(
          "Volume context property "
              + GoSyntax.quote(key)
              + "="
              + GoSyntax.quote(value)
              + " is not supported: the driver mounts persistent volumes only, not inline"
              + " ephemeral volumes (use a PersistentVolumeClaim)");
    }
  }

  private static boolean bool(String key, String value) {
    return GoSyntax.parseBool(value)
        .orElseThrow(() ->
            invalid(
                "Volume context property "
                    + GoSyntax.quote(key)
                    + " must be a boolean value: "
                    + GoSyntax.parseBoolError(value)));
  }

  private static SortedMap<String, String> ipMap(String key, String json) {
    Object parsed;
    try {
      parsed = Json.parse(json);
    } catch (IllegalArgumentException e) {
      throw notAnObject(key, e.getMessage());
    }
    if (!(parsed instanceof Map<?, ?> object)) {
      throw notAnObject(key, "not an object");
    }
    if (object.isEmpty()) {
      throw invalid(
          "Volume context property " + GoSyntax.quote(key) + " has no availability zone entries");
    }
    SortedMap<String, String> out = new TreeMap<>();
    for (Map.Entry<?, ?> e : object.entrySet()) {
      String zone = (String) e.getKey();
      // JSON null decodes to "" as in Go's encoding/json; any other non-string is an error.
      Object value = e.getValue() == null ? "" : e.getValue();
      if (!(value instanceof String ip)) {
        throw notAnObject(key, "the value of " + GoSyntax.quote(zone) + " is not a string");
      }
      if (!GoSyntax.isIpLiteral(ip)) {
        throw invalid(
            "Volume context property "
                + GoSyntax.quote(key)
                + " has an invalid IP address "
                + GoSyntax.quote(ip)
                + " for availability zone "
                + GoSyntax.quote(zone));
      }
      out.put(zone, ip);
    }
    return out;
  }

  private static DriverException notAnObject(String key, String why) {
    return invalid(
        "Volume context property "
            + GoSyntax.quote(key)
            + " must be a JSON object of availability zone to IP address: "
            + why);
  }

  private static DriverException invalid(String message) {
    return new DriverException(DriverException.Kind.INVALID_ARGUMENT, message);
  }
}
