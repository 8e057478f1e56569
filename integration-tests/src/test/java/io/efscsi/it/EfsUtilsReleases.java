package io.efscsi.it;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The unmodified efs-utils releases beside the repository ({@code ../shared/efs-utils}, or {@code
 * -Defscsi.efs-utils.dir}): their checksums checked, unpacked where a test runs them, each as
 * {@code efs-utils-v<version>/} (src/, dist/).
 */
final class EfsUtilsReleases {

  static final List<String> ALL = List.of("1.36.0", "2.4.2", "3.2.0");

  private EfsUtilsReleases() {}

  /** Where the release archives and their SHA256SUMS are. */
  static Path archives() {
    Path repo = Path.of(System.getProperty("user.dir")).toAbsolutePath().getParent();
    return Path.of(
        System.getProperty(
            "efscsi.efs-utils.dir", repo.resolveSibling("shared").resolve("efs-utils").toString()));
  }

  /** Checks the archives against SHA256SUMS and unpacks the given releases into {@code into}. */
  static void unpack(Path into, String... versions) throws Exception {
    Path archives = archives();
    run(List.of("sha256sum", "--check", "--quiet", "SHA256SUMS"), archives);
    for (String v : versions) {
      run(
          List.of(
              "tar",
              "-xJf",
              archives.resolve("efs-utils-v" + v + ".tar.xz").toString(),
              "-C",
              into.toString()),
          into);
    }
  }

  /** Writes a stand-in script (for a binary efs-utils runs) with mode 755. */
  static void executable(Path p, String text) throws java.io.IOException {
    java.nio.file.Files.writeString(p, text, StandardCharsets.UTF_8);
    java.nio.file.Files.setPosixFilePermissions(
        p, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  private static void run(List<String> cmd, Path dir) throws Exception {
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      throw new AssertionError(String.join(" ", cmd) + " failed in " + dir + ":\n" + out);
    }
  }
}
