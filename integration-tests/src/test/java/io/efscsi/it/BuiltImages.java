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
 * the removal with JUnit's launcher session, which closes it after the last class. When the run
 * holds such a class, {@link ImagesAhead} begins the builds as the run starts, on a thread of their
 * own, beside the classes that come first; the first user then waits for what is left of them.
 */
final class BuiltImages implements BeforeAllCallback {

  private static final Namespace NS = Namespace.create(BuiltImages.class);

  private static boolean project;
  private static final List<String> sidecars = new ArrayList<>();
  private static Path archiveDir;
  private static Path archive;
  private static Thread ahead;
  private static Throwable aheadFailure;

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
    failedAhead();
    long t0 = System.nanoTime();
    ContainerImageIT.build();
    project = true;
    TestTimes.since("image build (Dockerfile, once per run)", timedIn(), t0, "");
  }

  /**
   * The docker-archive with the project's image and the sidecars' ({@link ClusterImages#SIDECARS}),
   * made on the first call.
   */
  static synchronized Path archive() throws Exception {
    if (archive != null) {
      return archive;
    }
    failedAhead();
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
    TestTimes.since("sidecar images and docker save (once per run)", timedIn(), t0, "");
    return archive;
  }

  /**
   * Begins {@link #archive} (with {@code sidecars}) or {@link #project} on a thread of its own; the
   * first user's call waits for it (both hold this class's lock), and what it threw is thrown to
   * every user after.
   */
  static synchronized void beginAhead(boolean sidecars) {
    if (ahead != null || project) {
      return;
    }
    ahead =
        Thread.ofPlatform()
            .name("images-ahead")
            .daemon()
            .start(() -> {
              synchronized (BuiltImages.class) { // the failure is known before a user looks
                try {
                  if (sidecars) {
                    archive();
                  } else {
                    project();
                  }
                } catch (Throwable e) {
                  aheadFailure = e;
                }
              }
            });
  }

  private static void failedAhead() {
    if (aheadFailure != null && Thread.currentThread() != ahead) {
      throw new IllegalStateException(
          "building the images ahead of the first user failed", aheadFailure);
    }
  }

  /** The time table's "part of" for a build: the user that waited, or the whole IT run's. */
  private static String timedIn() {
    return Thread.currentThread() == ahead ? "integration tests" : "first user";
  }

  /** Waits for the builds begun ahead, so that the removal never runs beside them. */
  private static void awaitAhead() throws InterruptedException {
    Thread t;
    synchronized (BuiltImages.class) {
      t = ahead;
    }
    if (t != null) {
      t.join();
    }
  }

  /** Removes what was built (also what a failed build left), and the archive. */
  static void removeAll() throws Exception {
    awaitAhead();
    synchronized (BuiltImages.class) {
      removeBuilt();
    }
  }

  private static void removeBuilt() throws Exception {
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
    ahead = null;
    aheadFailure = null;
    if (!failures.isEmpty()) {
      throw new AssertionError("images not removed: " + failures);
    }
  }
}
