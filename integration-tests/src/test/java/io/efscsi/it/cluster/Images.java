package io.efscsi.it.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Images for the test cluster, which pulls nothing: the pause image and a test pod image are
 * docker-archive tarballs made here from Debian's static busybox (one layer, written with tar).
 */
public final class Images {

  /** The sandbox ("pause") image: busybox sleeping. */
  public static final String PAUSE = "efs-csi-test/pause:1";

  /** A busybox image for test pods (sh, cat, echo, sleep…). */
  public static final String BUSYBOX = "efs-csi-test/busybox:1";

  private static final List<String> APPLETS =
      List.of("sh", "sleep", "cat", "ls", "echo", "mkdir", "test", "true", "date", "sync", "rm");

  private Images() {}

  /** The result of a command: its exit code (-1 when it took too long) and its output. */
  public record Result(int exit, String output) {}

  public static Result exec(long timeoutSeconds, List<String> command)
      throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    byte[][] out = new byte[1][];
    Thread reader =
        Thread.ofVirtual()
            .start(() -> {
              try {
                out[0] = p.getInputStream().readAllBytes();
              } catch (IOException e) {
                out[0] = e.toString().getBytes(StandardCharsets.UTF_8);
              }
            });
    if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor();
      reader.join();
      return new Result(-1, new String(out[0], StandardCharsets.UTF_8));
    }
    reader.join();
    return new Result(p.exitValue(), new String(out[0], StandardCharsets.UTF_8));
  }

  /** The pause image's tarball, made under {@code dir}. */
  static Path pause(Path dir) throws IOException, InterruptedException {
    return busyboxImage(dir, PAUSE, "[\"/bin/sleep\", \"2147483647\"]");
  }

  /** The busybox image's tarball, made under {@code dir}. */
  public static Path busybox(Path dir) throws IOException, InterruptedException {
    return busyboxImage(dir, BUSYBOX, "[\"/bin/sh\"]");
  }

  private static Path busyboxImage(Path dir, String tag, String entrypoint)
      throws IOException, InterruptedException {
    Path busybox = Path.of("/bin/busybox");
    if (!Files.isExecutable(busybox)) {
      throw new IOException("no /bin/busybox (Debian's busybox-static; scripts/test installs it)");
    }
    String name = tag.replaceAll("\\W", "-");
    Path work = Files.createDirectories(dir.resolve("images/" + name));
    Path rootfs = Files.createDirectories(work.resolve("rootfs"));
    for (String d : List.of("bin", "tmp", "etc", "proc", "sys", "dev", "data")) {
      Files.createDirectories(rootfs.resolve(d));
    }
    Files.copy(busybox, rootfs.resolve("bin/busybox"));
    for (String applet : APPLETS) {
      Files.createSymbolicLink(rootfs.resolve("bin/" + applet), Path.of("busybox"));
    }
    Path image = Files.createDirectories(work.resolve("image"));
    Path layer = Files.createDirectories(image.resolve("layer")).resolve("layer.tar");
    check(
        exec(
            60,
            List.of(
                "tar",
                "--numeric-owner",
                "--owner=0",
                "--group=0",
                "-C",
                rootfs.toString(),
                "-cf",
                layer.toString(),
                ".")));
    String diffId = "sha256:" + sha256(Files.readAllBytes(layer));
    String config =
        """
        {"architecture": "amd64", "os": "linux",
         "config": {"Entrypoint": %s, "Env": ["PATH=/bin"]},
         "rootfs": {"type": "layers", "diff_ids": ["%s"]}}
        """
            .formatted(entrypoint, diffId);
    String configName = sha256(config.getBytes(StandardCharsets.UTF_8)) + ".json";
    Files.writeString(image.resolve(configName), config);
    Files.writeString(
        image.resolve("manifest.json"),
        "[{\"Config\": \"%s\", \"RepoTags\": [\"%s\"], \"Layers\": [\"layer/layer.tar\"]}]"
            .formatted(configName, tag));
    Path tarball = dir.resolve("images/" + name + ".tar");
    check(exec(60, List.of("tar", "-C", image.toString(), "-cf", tarball.toString(), ".")));
    return tarball;
  }

  private static void check(Result r) throws IOException {
    if (r.exit() != 0) {
      throw new IOException(r.output());
    }
  }

  private static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
