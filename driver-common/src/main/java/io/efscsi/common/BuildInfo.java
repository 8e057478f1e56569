package io.efscsi.common;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Properties;

/**
 * What was built: version, commit and date, written into the jar by the build. The launcher prints
 * it in the Go driver's {@code --version} shape through the shared JSON writer.
 */
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
}
