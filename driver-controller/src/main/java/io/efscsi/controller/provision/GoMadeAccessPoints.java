package io.efscsi.controller.provision;

import io.efscsi.common.error.DriverException;
import io.efscsi.controller.cloud.Cloud.AccessPoint;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Access points the Go driver made with reuseAccessPoint. Their client token is the SHA-256 of the
 * claim name alone, so the token says nothing about the namespace: one found by it may be another
 * namespace's claim of the same name. It is handed to this claim only when its root directory is
 * the one this claim gets under the StorageClass, and that root tells the namespace.
 */
final class GoMadeAccessPoints {

  private static final Logger log = LoggerFactory.getLogger(GoMadeAccessPoints.class);

  private GoMadeAccessPoints() {}

  /** The Go driver's reuseAccessPoint token: sha256 hex of the PVC name. */
  static String token(ProvisioningParameters p) {
    return AccessPointProvisioner.sha256(p.pvcName().orElseThrow());
  }

  /**
   * Refuses a Go-made access point that cannot be shown to be this claim's: ALREADY_EXISTS "Invalid
   * existing access point …". The refusal names the access point and the root this claim would get,
   * never the found access point's root (another namespace's path); the log has it.
   *
   * @param volumeName the PV name of this CreateVolume
   */
  static void checkBelongs(AccessPoint ap, ProvisioningParameters p, String volumeName) {
    String claim = p.pvcNamespace().orElseThrow() + "/" + p.pvcName().orElseThrow();
    String why = null;
    if (!AccessPointPath.namespaced(p)) {
      why =
          String.format(
              "the Go driver made it for a claim named %s in a namespace it did not record, and"
                  + " %s puts no namespace in the root directory, so nothing shows it is %s's."
                  + " reuseAccessPoint adopts Go-made access points only through a subPathPattern"
                  + " with ${.PVC.namespace}; if it is this claim's, bind it with a static"
                  + " PersistentVolume, otherwise give the claim another name",
              p.pvcName().get(),
              p.subPathPattern()
                  .map(s -> "subPathPattern " + s)
                  .orElse("the default path (the PV name)"),
              claim);
    } else if (!AccessPointPath.proposes(p, volumeName, ap.rootPath())) {
      why =
          String.format(
              "the Go driver made it for a claim named %s, but its root directory is not the one"
                  + " claim %s gets under this StorageClass (%s): it belongs to another namespace"
                  + " or another layout",
              p.pvcName().get(), claim, AccessPointPath.describe(p, volumeName));
    }
    if (why != null) {
      log.warn(
          "{}: not reusing access point {} (root {}) for claim {}: {}",
          volumeName,
          ap.id(),
          ap.rootPath(),
          claim,
          why);
      throw DriverException.alreadyExists("Invalid existing access point %s: %s", ap.id(), why);
    }
  }
}
