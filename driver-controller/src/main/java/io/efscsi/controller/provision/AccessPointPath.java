package io.efscsi.controller.provision;

import io.efscsi.common.error.DriverException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.UUID;

/**
 * The root directory of a new access point: {@code /basePath/<PV name>}, or {@code
 * /basePath/<subPathPattern>} with {@code -<uuid>} appended when ensureUniqueDirectory is on. The
 * suffix is derived from the PV name, so a retried CreateVolume proposes the same directory (the Go
 * driver draws a random UUID per call).
 */
final class AccessPointPath {

  static final int MAX_LENGTH = 100;
  static final int MAX_SLASHES = 5;
  private static final String NAMESPACE = "${.PVC.namespace}";

  private AccessPointPath() {}

  static String of(ProvisioningParameters p, String volumeName) {
    String dir = volumeName;
    if (p.subPathPattern().isPresent()) {
      String expanded = expand(p.subPathPattern().get(), p);
      dir =
          p.ensureUniqueDirectory()
              ? expanded
                  + "-"
                  + UUID.nameUUIDFromBytes(
                      ("efs-csi-java/" + volumeName).getBytes(StandardCharsets.UTF_8))
              : expanded;
    }
    String path = clean("/" + p.basePath() + "/" + dir);
    if (path.length() > MAX_LENGTH) {
      throw DriverException.invalidArgument(
          "Proposed path '%s' exceeds file system limit of %d characters", path, MAX_LENGTH);
    }
    if (path.chars().filter(c -> c == '/').count() > MAX_SLASHES) {
      throw DriverException.invalidArgument(
          "Proposed path '%s' exceeds file system limit of %d subdirectories",
          path, MAX_SLASHES - 1);
    }
    return path;
  }

  /**
   * Whether {@code rootPath} is what a request for {@code volumeName} proposes: the same path, or,
   * with ensureUniqueDirectory, the same pattern with any UUID suffix (the Go driver drew its
   * suffix at random, so an access point it made for the same name carries another one).
   */
  static boolean proposes(ProvisioningParameters p, String volumeName, String rootPath) {
    if (rootPath.equals(of(p, volumeName))) {
      return true;
    }
    if (p.subPathPattern().isEmpty() || !p.ensureUniqueDirectory()) {
      return false;
    }
    String prefix = clean("/" + p.basePath() + "/" + expand(p.subPathPattern().get(), p)) + "-";
    return rootPath.startsWith(prefix)
        && rootPath
            .substring(prefix.length())
            .matches("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  }

  /**
   * The root {@link #proposes} accepts, for messages: {@link #of}, or with ensureUniqueDirectory
   * the pattern's path followed by {@code -<uuid>}.
   */
  static String describe(ProvisioningParameters p, String volumeName) {
    if (p.subPathPattern().isEmpty() || !p.ensureUniqueDirectory()) {
      return of(p, volumeName);
    }
    return clean("/" + p.basePath() + "/" + expand(p.subPathPattern().get(), p)) + "-<uuid>";
  }

  /**
   * Whether the root this StorageClass gives a claim tells its namespace: a subPathPattern whose
   * {@code ${.PVC.namespace}} survives path cleaning. A namespace is a DNS label (no {@code /}, no
   * {@code .}), so cleaning drops a segment holding it for every namespace alike or for none; two
   * namespaces tried are enough, and with everything else fixed two namespaces never share a root.
   */
  static boolean namespaced(ProvisioningParameters p) {
    if (p.subPathPattern().isEmpty() || !p.subPathPattern().get().contains(NAMESPACE)) {
      return false;
    }
    String pattern = p.subPathPattern().get();
    return !clean("/" + expand(pattern, p, Optional.of("a")))
        .equals(clean("/" + expand(pattern, p, Optional.of("b"))));
  }

  private static String expand(String pattern, ProvisioningParameters p) {
    return expand(pattern, p, p.pvcNamespace());
  }

  private static String expand(
      String pattern, ProvisioningParameters p, Optional<String> namespace) {
    String s = pattern;
    s = replace(s, "${.PVC.name}", p.pvcName(), ProvisioningParameters.PVC_NAME, pattern);
    s = replace(s, NAMESPACE, namespace, ProvisioningParameters.PVC_NAMESPACE, pattern);
    s = replace(s, "${.PV.name}", p.pvName(), ProvisioningParameters.PV_NAME, pattern);
    if (s.contains("${") || s.contains("}")) {
      throw DriverException.invalidArgument("Path specified %s contains invalid elements", pattern);
    }
    return s;
  }

  private static String replace(
      String s, String variable, Optional<String> value, String parameter, String pattern) {
    if (!s.contains(variable)) {
      return s;
    }
    if (value.isEmpty()) {
      throw DriverException.invalidArgument(
          "subPathPattern '%s' uses %s but the request has no %s parameter: run csi-provisioner"
              + " with --extra-create-metadata",
          pattern, variable, parameter);
    }
    return s.replace(variable, value.get());
  }

  /** Go's path.Clean for an absolute path. */
  static String clean(String path) {
    java.util.ArrayDeque<String> parts = new java.util.ArrayDeque<>();
    for (String seg : path.split("/")) {
      if (seg.isEmpty() || seg.equals(".")) {
        continue;
      }
      if (seg.equals("..")) {
        parts.pollLast();
      } else {
        parts.addLast(seg);
      }
    }
    return "/" + String.join("/", parts);
  }
}
