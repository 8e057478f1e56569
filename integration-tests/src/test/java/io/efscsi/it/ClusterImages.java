package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.efscsi.it.cluster.Cluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The images the cluster suite runs, made with the suite's Docker engine (no registry is
 * reachable): the project's own image as {@link ContainerImageIT} builds it from the Dockerfile,
 * and the CSI sidecars from the binaries in {@code ../shared/k8s} on the same Debian base; saved in
 * one docker-archive and imported into the cluster's containerd.
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

  /** Builds every image and imports them into {@code cluster}; returns the seconds it took. */
  static double buildAndImport(Cluster cluster, Path work) throws Exception {
    long t0 = System.nanoTime();
    ContainerImageIT.buildImage();
    Path bins = io.efscsi.it.cluster.KubeBinaries.unpacked();
    List<String> images = new ArrayList<>(List.of(ContainerImageIT.IMAGE));
    for (String name : SIDECARS) {
      Path ctx = Files.createDirectories(work.resolve("sidecar-" + name));
      Files.copy(bins.resolve(name), ctx.resolve(name), StandardCopyOption.REPLACE_EXISTING);
      Files.writeString(
          ctx.resolve("Dockerfile"),
          """
          FROM %s
          COPY %s /%s
          ENTRYPOINT ["/%s"]
          """
              .formatted(ContainerImageIT.DEBIAN, name, name, name));
      ContainerImageIT.ok(300, "docker", "build", "-q", "-t", sidecar(name), ctx.toString());
      images.add(sidecar(name));
    }
    Path tar = work.resolve("images.tar");
    List<String> save = new ArrayList<>(List.of("docker", "save", "-o", tar.toString()));
    save.addAll(images);
    ContainerImageIT.ok(600, save.toArray(String[]::new));
    cluster.importImage(tar);
    Files.delete(tar);
    cluster.importImage(io.efscsi.it.cluster.Images.busybox(work));
    return (System.nanoTime() - t0) / 1e9;
  }

  /**
   * Removes the sidecar images from the engine, and the project's image with what its build left
   * (as ContainerImageIT does after its own build).
   */
  static void remove() throws Exception {
    for (String name : SIDECARS) {
      NfsLab.Result r = ContainerImageIT.run(120, "docker", "image", "rm", "-f", sidecar(name));
      assertEquals(0, r.exit(), r.output());
    }
    ContainerImageIT.removeImage();
  }
}
