package io.efscsi.node.takeover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.efscsi.node.takeover.EfsUtilsSamples.Release;
import io.efscsi.node.takeover.EfsUtilsState.Tunnel;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Pattern;

/**
 * efs-utils' state for one mount (file name, state JSON, tunnel config), as mount.efs of each
 * release line writes it, with fuzzed mount points, ports, hosts, verify levels, access points and
 * credentials, then the state JSON and the config cut, spliced or overwritten at fuzzed places:
 *
 * <ul>
 *   <li>a state with every field valid is read as written;
 *   <li>whatever is read satisfies what the takeover relies on: the file system and port the name
 *       says, ports that are ports, a stunnel verify level, a TLS tunnel with its client
 *       certificate, an access point {@code fsap-<17 hex>}, a checked server name of the file
 *       system; anything else is refused with a reason ({@link UnusableStateException}, never
 *       another failure).
 * </ul>
 */
class EfsUtilsStateParserFuzzTest {

  private static final Pattern PORT = Pattern.compile("[1-9][0-9]{0,4}");
  private static final Pattern ACCESS_POINT = Pattern.compile("fsap-[0-9a-f]{17}");

  // CI's budget is a count of inputs (about what 10 s of fuzzing ran alone on this kind
  // of machine), not a time: the tier runs beside the ITs on the CPU they leave idle, where a
  // time budget ran a sixth as many (docs/reliability.md, "Fuzzed parsers")
  @FuzzTest(maxDuration = "300s", maxExecutions = 28_000)
  void anyStateIsReadAsWrittenOrRefusedWithAReason(FuzzedDataProvider data) {
    EfsUtilsSamples s = new EfsUtilsSamples().release(data.pickValue(Release.values()));
    boolean stunnel = !s.release.name().endsWith("_PROXY");
    s.tls = stunnel || data.consumeBoolean();
    s.mountPoint =
        "/var/lib/kubelet/pods/"
            + data.consumeString(12).replaceAll("[\r\n]", "")
            + "/volumes/kubernetes.io~csi/"
            + data.consumeString(24).replaceAll("[\r\n]", "")
            + "/mount";
    s.port = data.consumeBoolean() ? data.consumeInt(20049, 20449) : data.consumeInt(0, 99999);
    s.connectHost = data.pickValue(new String[] {EfsUtilsSamples.DNS, "10.0.1.23"});
    s.connectPort = data.consumeBoolean() ? "2049" : value(data.consumeString(6));
    s.verify = data.consumeBoolean() ? "2" : value(data.consumeString(3));
    s.accessPoint =
        switch (data.consumeInt(0, 2)) {
          case 0 -> Optional.empty();
          case 1 -> Optional.of(EfsUtilsSamples.AP);
          default -> Optional.of(data.consumeString(24));
        };
    s.credentialsMethod = data.consumeBoolean() ? Optional.of("podidentity") : Optional.empty();
    s.pid = data.consumeLong();
    String stem = s.stem();
    String state = splice(data, s.state());
    String config = splice(data, s.config());
    boolean edited = !state.equals(s.state()) || !config.equals(s.config());

    EfsUtilsState st;
    try {
      st = EfsUtilsStateParser.parse(stem, state, config);
    } catch (UnusableStateException e) {
      assertTrue(e.getMessage() != null && !e.getMessage().isBlank(), "a refusal without reason");
      assertTrue(
          edited || !valid(s),
          () -> "a valid state refused (" + e.getMessage() + "):\n" + state + "\n" + config);
      return;
    }
    assertInvariants(stem, st);
    if (!edited) {
      assertTrue(valid(s), () -> "an invalid state read as " + st + ":\n" + state + "\n" + config);
      assertEquals(expected(s), st);
    }
  }

  /** A config value efs-utils could write: one line, as the reader strips it. */
  private static String value(String s) {
    return s.replaceAll("[\r\n]", "").strip();
  }

  /** The text, or with a fuzzed stretch replaced by fuzzed text (a torn write, an edit). */
  private static String splice(FuzzedDataProvider data, String text) {
    if (!data.consumeBoolean()) {
      return text;
    }
    int from = data.consumeInt(0, text.length());
    int to = data.consumeInt(from, Math.min(text.length(), from + 64));
    return text.substring(0, from) + data.consumeString(32) + text.substring(to);
  }

  /** Every field as mount.efs writes it, the tunnel one that can run. */
  private static boolean valid(EfsUtilsSamples s) {
    return s.port >= 1
        && s.port <= 65535
        && PORT.matcher(s.connectPort).matches()
        && Integer.parseInt(s.connectPort) <= 65535
        && (!s.tls || s.verify.matches("[0-4]"))
        && (!s.tls || s.accessPoint.map(ap -> ACCESS_POINT.matcher(ap).matches()).orElse(true));
  }

  private static EfsUtilsState expected(EfsUtilsSamples s) {
    Tunnel tunnel =
        switch (s.release) {
          case V2_PROXY -> Tunnel.EFS_PROXY_V2;
          case V3_PROXY -> Tunnel.EFS_PROXY_V3;
          default -> Tunnel.STUNNEL;
        };
    boolean v3Proxy = s.release == Release.V3_PROXY;
    return new EfsUtilsState(
        s.stem(),
        tunnel,
        EfsUtilsSamples.FS,
        s.mountPoint,
        s.port,
        s.connectHost,
        Integer.parseInt(s.connectPort),
        s.tls,
        s.tls ? Optional.of(EfsUtilsSamples.DNS) : Optional.empty(),
        s.tls ? OptionalInt.of(Integer.parseInt(s.verify)) : OptionalInt.empty(),
        s.tls ? Optional.of(s.caFile) : Optional.empty(),
        s.tls ? Optional.of("/var/run/efs/" + s.stem() + "+/certificate.pem") : Optional.empty(),
        s.tls ? Optional.of("/etc/amazon/efs/privateKey.pem") : Optional.empty(),
        s.tls ? s.accessPoint : Optional.empty(),
        s.tls ? s.credentialsMethod : Optional.empty(),
        s.tls || v3Proxy ? Optional.of(EfsUtilsSamples.REGION) : Optional.empty(),
        s.pid,
        s.command());
  }

  /** What the takeover builds a proxy from, whatever the files said. */
  private static void assertInvariants(String stem, EfsUtilsState st) {
    assertTrue(st.fileSystemId().matches("fs-[0-9a-f]+"), st.fileSystemId());
    assertTrue(stem.startsWith(st.fileSystemId() + "."), stem);
    assertTrue(stem.endsWith("." + st.port()), stem);
    assertTrue(stem.equals(st.stem()), st.stem());
    assertTrue(st.port() >= 1 && st.port() <= 65535, () -> "listen port " + st.port());
    assertTrue(
        st.upstreamPort() >= 1 && st.upstreamPort() <= 65535,
        () -> "upstream port " + st.upstreamPort());
    st.verifyLevel()
        .ifPresent(v -> assertTrue(v >= 0 && v <= 4, () -> "stunnel verify level " + v));
    assertTrue(!st.upstreamHost().isEmpty(), "no upstream host");
    if (st.tls()) {
      assertTrue(st.certificate().isPresent() && st.privateKey().isPresent(), "TLS without cert");
    } else {
      assertTrue(
          st.certificate().isEmpty() && st.accessPointId().isEmpty() && !st.iam(),
          "plain TCP with a certificate, access point or IAM");
    }
    assertTrue(st.tunnel() != Tunnel.STUNNEL || st.tls(), "stunnel without TLS");
    st.accessPointId()
        .ifPresent(ap -> assertTrue(ACCESS_POINT.matcher(ap).matches(), "access point " + ap));
    st.checkHost()
        .ifPresent(
            h -> assertTrue(h.startsWith(st.fileSystemId() + "."), "checked server name " + h));
    String middle =
        stem.substring(st.fileSystemId().length() + 1, stem.length() - ("." + st.port()).length());
    assertEquals(middle, EfsUtilsStateParser.fileSafe(st.mountPoint()), "the name's mount point");
  }
}
