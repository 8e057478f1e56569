package io.efscsi.node.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.DictionaryEntries;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.efscsi.common.error.DriverException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Any volume id:
 *
 * <ul>
 *   <li>is read as a regular expression of the documented forms reads it, or refused by both
 *       (INVALID_ARGUMENT with a message, never another failure);
 *   <li>when read, names a file system {@code fs-[0-9a-f]{8,40}}, an access point {@code
 *       fsap-[0-9a-f]{8,40}} if any, a subpath that Go's {@code path.Clean} leaves as it is, and an
 *       export path that is absolute and never above the root;
 *   <li>a handle written back in the typed form is read as itself.
 * </ul>
 */
class VolumeHandleFuzzTest {

  /**
   * The documented forms: {@code [efs|s3files:]fs-id[:subpath[:fsap-id]]}, where fs-id may also be
   * a DNS name {@code [label.]fs-id.domain} of DNS characters only (group 2, its id in group 3).
   */
  private static final Pattern FORMS =
      Pattern.compile(
          "(?:(efs|s3files):)?((?:[a-z0-9][a-z0-9-]*\\.)?(fs-[0-9a-f]{8,40})"
              + "\\.[a-z0-9][a-z0-9.-]*[a-z0-9]|(fs-[0-9a-f]{8,40}))(?::([^:]*)(?::([^:]*))?)?");

  private static final Pattern ACCESS_POINT = Pattern.compile("fsap-[0-9a-f]{8,40}");

  // CI's budget is a count of inputs (about what 10 s of fuzzing ran alone on this kind
  // of machine), not a time: the tier runs beside the ITs on the CPU they leave idle, where a
  // time budget ran a sixth as many (docs/reliability.md, "Fuzzed parsers")
  @FuzzTest(maxDuration = "300s", maxExecutions = 85_000)
  @DictionaryEntries({
    "efs:",
    "s3files:",
    "fs-0123456789abcdef",
    ":fsap-0123456789abcdef",
    ".efs.us-east-1.amazonaws.com",
    "/..",
    "/./"
  })
  void anyVolumeIdIsReadAsTheFormsSayOrIsInvalidArgument(FuzzedDataProvider data) {
    String volumeId = new String(data.consumeRemainingAsBytes(), StandardCharsets.UTF_8);
    Optional<VolumeHandle> expected = reference(volumeId);
    VolumeHandle h;
    try {
      h = VolumeHandle.parse(volumeId);
    } catch (DriverException e) {
      assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind(), e.getMessage());
      FuzzChecks.clear(e);
      assertEquals(Optional.empty(), expected, () -> volumeId + " refused: " + e.getMessage());
      return;
    }
    assertEquals(expected, Optional.of(h), volumeId);
    assertTrue(h.fileSystemId().matches("fs-[0-9a-f]{8,40}"), volumeId);
    h.accessPointId().ifPresent(ap -> assertTrue(ACCESS_POINT.matcher(ap).matches(), volumeId));
    assertClean(h.subPath());
    assertTrue(!h.subPath().contains(":") && !h.subPath().isEmpty(), h.subPath());
    assertClean(h.exportPath());
    assertTrue(
        h.exportPath().startsWith("/") && !("/" + h.exportPath() + "/").contains("/../"),
        () -> "export path " + h.exportPath() + " of " + volumeId + " leaves the root");
    h.dnsName()
        .ifPresent(n -> assertTrue(n.matches("[a-z0-9.-]+") && n.contains(h.fileSystemId()), n));
    String typed =
        h.type().prefix()
            + ":"
            + h.dnsName().orElse(h.fileSystemId())
            + ":"
            + h.subPath()
            + ":"
            + h.accessPointId().orElse("");
    assertEquals(h, VolumeHandle.parse(typed), typed);
  }

  private static Optional<VolumeHandle> reference(String volumeId) {
    Matcher m = FORMS.matcher(volumeId);
    if (!m.matches()) {
      return Optional.empty();
    }
    VolumeHandle.Type type =
        "s3files".equals(m.group(1)) ? VolumeHandle.Type.S3FILES : VolumeHandle.Type.EFS;
    String subPath = m.group(5) == null || m.group(5).isEmpty() ? "/" : m.group(5);
    String ap = m.group(6) == null ? "" : m.group(6);
    if (!ap.isEmpty() && !ACCESS_POINT.matcher(ap).matches()) {
      return Optional.empty();
    }
    return Optional.of(
        new VolumeHandle(
            type,
            m.group(3) != null ? m.group(3) : m.group(4),
            GoSyntax.cleanPath(subPath),
            ap.isEmpty() ? Optional.empty() : Optional.of(ap),
            Optional.ofNullable(m.group(3)).map(id -> m.group(2))));
  }

  /**
   * What Go's {@code path.Clean} promises of its result: no empty or {@code .} element, {@code ..}
   * only leading a relative path, no trailing slash but the root's, {@code .} for nothing, and
   * cleaning it again changes nothing.
   */
  private static void assertClean(String p) {
    assertEquals(p, GoSyntax.cleanPath(p), "cleaning again");
    if (p.equals("/") || p.equals(".")) {
      return;
    }
    boolean rooted = p.startsWith("/");
    String[] elements = (rooted ? p.substring(1) : p).split("/", -1);
    boolean leading = !rooted;
    for (String e : elements) {
      assertTrue(!e.isEmpty() && !e.equals("."), () -> "an empty or . element in " + p);
      if (e.equals("..")) {
        assertTrue(leading, () -> "a .. that is not leading a relative path in " + p);
      } else {
        leading = false;
      }
    }
  }
}
