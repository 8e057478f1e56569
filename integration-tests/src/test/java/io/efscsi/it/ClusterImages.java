package io.efscsi.it;

import io.efscsi.it.cluster.Cluster;
import java.nio.file.Path;
import java.util.List;

/**
 * The images the cluster suite runs, made with the suite's Docker engine (no registry is
 * reachable): the project's own image as {@link ContainerImageIT} builds it from the Dockerfile,
 * and the CSI sidecars from the binaries in {@code ../shared/k8s} on the same Debian base; built
 * and saved in one docker-archive once per run ({@link BuiltImages}) and imported into each
 * cluster's containerd.
 */
final class ClusterImages {

  static final String TAG = "it";
  static final List<String> SIDECARS =
      List.of("csi-provisioner", "csi-node-driver-registrar", "livenessprobe", "csi-resizer");

  private ClusterImages() {}

  /** {@code efs-csi-test/<sidecar>:it}. */
  static String sidecar(String name) {
    return "efs-csi-test/" + name + ":" + TAG;
  }

  /**
   * Imports every image into {@code cluster} (built once per run, {@link BuiltImages}); the caller
   * times it.
   */
  static void importInto(Cluster cluster, Path work) throws Exception {
    cluster.importImage(BuiltImages.archive());
    cluster.importImage(io.efscsi.it.cluster.Images.busybox(work));
  }
}
