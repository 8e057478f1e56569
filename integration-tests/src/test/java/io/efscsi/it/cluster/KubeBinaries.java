package io.efscsi.it.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * The Kubernetes server binaries and CSI sidecars kept xz-compressed in {@code ../shared/k8s} (no
 * reachable registry ships them), unpacked once into {@code .tools/k8s/} of the repository and
 * checked against the SHA256SUMS that comes with them.
 */
public final class KubeBinaries {

  static final List<String> NAMES =
      List.of(
          "kube-apiserver",
          "kube-controller-manager",
          "kube-scheduler",
          "kubelet",
          "csi-provisioner",
          "csi-node-driver-registrar",
          "livenessprobe",
          "csi-resizer");

  private KubeBinaries() {}

  /** Where the shared binaries are: {@code efscsi.k8s.dir}, or {@code ../shared/k8s}. */
  static Path source() {
    String configured = System.getProperty("efscsi.k8s.dir");
    Path repo = Path.of("").toAbsolutePath().getParent(); // the suite runs in integration-tests/
    return configured != null ? Path.of(configured) : repo.resolveSibling("shared").resolve("k8s");
  }

  /** {@link #dir()}, for the suites outside this package. */
  public static Path unpacked() throws IOException, InterruptedException {
    return dir();
  }

  /** The directory holding every binary, unpacked and checked; unpacks what is missing. */
  static synchronized Path dir() throws IOException, InterruptedException {
    Path src = source();
    if (!Files.isRegularFile(src.resolve("SHA256SUMS"))) {
      throw new IOException(
          "no Kubernetes binaries at "
              + src
              + " (../shared/k8s beside the repository, or -Defscsi.k8s.dir=...)");
    }
    Path out = Path.of("").toAbsolutePath().getParent().resolve(".tools/k8s");
    Files.createDirectories(out);
    boolean unpacked = false;
    for (String name : NAMES) {
      Path bin = out.resolve(name);
      if (Files.isExecutable(bin)) {
        continue;
      }
      Path part = out.resolve(name + ".part");
      Process p =
          new ProcessBuilder("xz", "-dc", src.resolve(name + ".xz").toString())
              .redirectOutput(part.toFile())
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      if (p.waitFor() != 0) {
        throw new IOException("cannot unpack " + src.resolve(name + ".xz"));
      }
      part.toFile().setExecutable(true);
      Files.move(part, bin, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
      unpacked = true;
    }
    if (unpacked) {
      Process check =
          new ProcessBuilder("sha256sum", "--quiet", "-c", src.resolve("SHA256SUMS").toString())
              .directory(out.toFile())
              .redirectErrorStream(true)
              .start();
      String said = new String(check.getInputStream().readAllBytes());
      if (check.waitFor() != 0) {
        NAMES.forEach(n -> out.resolve(n).toFile().delete());
        throw new IOException("the unpacked Kubernetes binaries fail their SHA256SUMS:\n" + said);
      }
    }
    return out;
  }
}
