package io.efscsi.supervisor.upgrade;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.CRC32;
import java.util.zip.ZipFile;

/**
 * Which build of the proxy a plugin launches: a SHA-256 over every file under {@code
 * <home>/lib/proxy} (in byte order of their relative paths; the AOT cache {@code proxy.aot} left
 * out, since it is a cache and not behaviour) and the Java runtime's version (a JDK patch in the
 * image is a proxy change too), shown as 12 hex digits. A jar counts by its entries' names, sizes
 * and CRC-32s (its central directory, so 40 MiB of jars are not read at every plugin start; an
 * emulated node took seconds for that), any other file by its size and CRC-32. Jars are
 * reproducible, so a release that changes only the controller has the same fingerprint and moves no
 * proxy.
 */
public final class ProxyBuild {

  /** The file left out: a cache the JVM ignores when it does not match. */
  static final String AOT_CACHE = "proxy.aot";

  private ProxyBuild() {}

  /** The fingerprint of the proxy under {@code lib} run by {@code javaVersion}. */
  public static String of(Path lib, String javaVersion) throws IOException {
    MessageDigest sha;
    try {
      sha = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this Java runtime", e);
    }
    List<Path> files;
    try (Stream<Path> walk = Files.walk(lib)) {
      files =
          walk.filter(Files::isRegularFile)
              .filter(f -> !f.getFileName().toString().equals(AOT_CACHE))
              .sorted(
                  (a, b) -> lib.relativize(a).toString().compareTo(lib.relativize(b).toString()))
              .toList();
    }
    for (Path f : files) {
      String name = lib.relativize(f).toString();
      StringBuilder line = new StringBuilder(name);
      if (name.endsWith(".jar")) {
        try (ZipFile jar = new ZipFile(f.toFile())) {
          jar.stream()
              .forEach(e ->
                  line.append('\n')
                      .append(e.getName())
                      .append(' ')
                      .append(e.getSize())
                      .append(' ')
                      .append(Long.toHexString(e.getCrc())));
        }
      } else {
        line.append(' ').append(Files.size(f)).append(' ').append(Long.toHexString(crc(f)));
      }
      sha.update(line.append('\0').toString().getBytes(StandardCharsets.UTF_8));
    }
    sha.update(("java " + javaVersion).getBytes(StandardCharsets.UTF_8));
    return HexFormat.of().formatHex(sha.digest(), 0, 6);
  }

  private static long crc(Path f) throws IOException {
    CRC32 crc = new CRC32();
    byte[] buf = new byte[1 << 16];
    try (InputStream in = Files.newInputStream(f)) {
      for (int n; (n = in.read(buf)) > 0; ) {
        crc.update(buf, 0, n);
      }
    }
    return crc.getValue();
  }

  /** The fingerprint for this JVM's runtime. */
  public static String of(Path lib) throws IOException {
    return of(lib, System.getProperty("java.runtime.version"));
  }
}
