package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.BuildInfo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * One version everywhere: the Maven reactor's, what {@code efs-csi version} prints, the chart's
 * appVersion (its default image tag) and the image tag of the kustomize stable overlays. A release
 * changes them together (docs/install.md, CHANGELOG.md); this test fails when one is left behind.
 */
class ReleaseVersionTest {

  /** The Maven reactor's version, passed by the build (integration-tests/pom.xml). */
  static String mavenVersion() {
    String v = System.getProperty("efscsi.version");
    assertTrue(v != null && !v.isBlank(), "the build passes -Defscsi.version=${project.version}");
    return v;
  }

  static String field(Path file, String regex) throws IOException {
    Matcher m = Pattern.compile(regex, Pattern.MULTILINE).matcher(Files.readString(file));
    assertTrue(m.find(), file + " has no " + regex);
    String value = m.group(1);
    assertFalse(m.find(), file + " has " + regex + " more than once");
    return value;
  }

  @Test
  void theVersionCommandPrintsTheMavenVersion() {
    assertEquals(mavenVersion(), BuildInfo.load().version());
  }

  @Test
  void theChartsAppVersionIsTheMavenVersion() throws IOException {
    assertEquals(
        mavenVersion(),
        field(HelmChartTest.CHART.resolve("Chart.yaml"), "^appVersion:\\s*\"?([^\"\\s]+)\"?\\s*$"));
  }

  @Test
  void theStableOverlaysRunTheImageTaggedWithTheMavenVersion() throws IOException {
    for (String overlay : List.of("overlays/stable", "overlays/stable/ecr")) {
      assertEquals(
          mavenVersion(),
          field(
              KustomizeOverlaysTest.KUSTOMIZE_DIR.resolve(overlay).resolve("kustomization.yaml"),
              "^\\s+newTag:\\s*\"?([^\"\\s]+)\"?\\s*$"),
          overlay);
    }
  }
}
