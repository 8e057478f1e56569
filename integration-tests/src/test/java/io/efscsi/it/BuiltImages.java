package io.efscsi.it;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.junit.jupiter.api.extension.ExtensionContext.StoreScope;

/**
 * The images the suites build, built once per test JVM and removed when the JUnit run ends: the
 * project's image from the Dockerfile ({@link ContainerImageIT} and every cluster class), and the
 * CSI sidecars' images from the binaries in {@code ../shared/k8s} on the same Debian base, saved
 * once in the one docker-archive each cluster imports into its containerd ({@link ClusterImages}).
 * Each build of the Dockerfile runs its AOT training and its apt-get again (the engine's build
 * cache goes with the removed image), so one build serves every class that needs it.
 *
 * <p>A class that uses them registers this extension: its first use anywhere in the run registers
 * the removal with JUnit's launcher session, which closes it after the last class.
 */
final class BuiltImages implements BeforeAllCallback {

  private static final Namespace NS = Namespace.create(BuiltImages.class);

  private static boolean project;
  private static final List<String> sidecars = new ArrayList<>();
  private static Path archiveDir;
  private static Path archive;

  @Override
  public void beforeAll(ExtensionContext context) {
    context
        .getStore(StoreScope.LAUNCHER_SESSION, NS)
        .computeIfAbsent("removal", k -> (AutoCloseable) BuiltImages::removeAll);
  }

  /** The project's image ({@link ContainerImageIT#IMAGE}), built on the first call. */
  static synchronized void project() throws Exception {
    if (project) {
      return;
    }
    long t0 = System.nanoTime();
    ContainerImageIT.build();
    project = true;
    TestTimes.since("image build (Dockerfile, once per run)", "first user", t0, "");
  }

  /**
   * The docker-archive with the project's image and the sidecars' ({@link ClusterImages#SIDECARS}),
   * made on the first call.
   */
  static synchronized Path archive() throws Exception {
    if (archive != null) {
      return archive;
    }
    project();
    long t0 = System.nanoTime();
    archiveDir = Files.createTempDirectory("efscsi-images");
    Path bins = io.efscsi.it.cluster.KubeBinaries.unpacked();
    List<String> images = new ArrayList<>(List.of(ContainerImageIT.IMAGE));
    for (String name : ClusterImages.SIDECARS) {
      Path ctx = Files.createDirectories(archiveDir.resolve("sidecar-" + name));
      Files.copy(bins.resolve(name), ctx.resolve(name), StandardCopyOption.REPLACE_EXISTING);
      Files.writeString(
          ctx.resolve("Dockerfile"),
          """
          FROM %s
          COPY %s /%s
          ENTRYPOINT ["/%s"]
          """
              .formatted(ContainerImageIT.DEBIAN, name, name, name));
      String tag = ClusterImages.sidecar(name);
      ContainerImageIT.ok(300, "docker", "build", "-q", "-t", tag, ctx.toString());
      sidecars.add(tag);
      images.add(tag);
      HostCleanup.deleteTree(ctx);
    }
    Path tar = archiveDir.resolve("images.tar");
    List<String> save = new ArrayList<>(List.of("docker", "save", "-o", tar.toString()));
    save.addAll(images);
    ContainerImageIT.ok(600, save.toArray(String[]::new));
    archive = tar;
    TestTimes.since("sidecar images and docker save (once per run)", "first cluster", t0, "");
    return archive;
  }

  /** Removes what was built (also what a failed build left), and the archive. */
  static synchronized void removeAll() throws Exception {
    List<String> failures = new ArrayList<>();
    for (String tag : sidecars) {
      NfsLab.Result r = ContainerImageIT.run(120, "docker", "image", "rm", "-f", tag);
      if (r.exit() != 0) {
        failures.add(tag + ": " + r.output());
      }
    }
    sidecars.clear();
    ContainerImageIT.removeImage();
    project = false;
    if (archiveDir != null) {
      HostCleanup.deleteTree(archiveDir);
      archiveDir = null;
      archive = null;
    }
    if (!failures.isEmpty()) {
      throw new AssertionError("images not removed: " + failures);
    }
  }
}
