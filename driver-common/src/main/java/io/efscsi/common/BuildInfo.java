package io.efscsi.common;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/** What was built: version, commit and date, written into the jar by the build. */
public record BuildInfo(String version, String gitCommit, String buildDate) {

  private static final String RESOURCE = "/io/efscsi/common/build.properties";

  /** Reads the build's own properties from the classpath. */
  public static BuildInfo load() {
    Properties p = new Properties();
    try (InputStream in = BuildInfo.class.getResourceAsStream(RESOURCE)) {
      if (in == null) {
        throw new IllegalStateException("missing classpath resource " + RESOURCE);
      }
      p.load(in);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + RESOURCE, e);
    }
    return new BuildInfo(
        p.getProperty("version", "unknown"),
        p.getProperty("gitCommit", "unknown"),
        p.getProperty("buildDate", "unknown"));
  }

  /**
   * The Go driver's {@code --version} JSON shape (driverVersion, gitCommit, buildDate,
   * efsClientSource, goVersion → javaVersion, compiler, platform), pretty-printed.
   */
  public String toJson() {
    String os = System.getProperty("os.name", "linux").toLowerCase(java.util.Locale.ROOT);
    String arch = System.getProperty("os.arch", "amd64");
    arch = arch.equals("x86_64") ? "amd64" : arch.equals("aarch64") ? "arm64" : arch;
    return "{\n"
        + field("driverVersion", version)
        + ",\n"
        + field("gitCommit", gitCommit)
        + ",\n"
        + field("buildDate", buildDate)
        + ",\n"
        + field("efsClientSource", "efs-csi-java proxy (built in)")
        + ",\n"
        + field("javaVersion", Runtime.version().toString())
        + ",\n"
        + field("compiler", "javac")
        + ",\n"
        + field("platform", os + "/" + arch)
        + "\n}";
  }

  private static String field(String name, String value) {
    StringBuilder sb = new StringBuilder("  \"").append(name).append("\": \"");
    for (char c : value.toCharArray()) {
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        default -> {
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    return sb.append('"').toString();
  }
}
