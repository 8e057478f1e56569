package io.efscsi.supervisor.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A rollback between our releases adopts the proxies: every record shape this build writes (plain,
 * with a build, in each phase of a move, without users) is read by the previous release's reader
 * ({@link ReleasedRecordReader}) with the same identity, process, group and users, and what that
 * release wrote is read here.
 */
class RecordCompatibilityTest {

  /** A record exactly as the previous release (ad89752) wrote it. */
  private static final String WRITTEN_BY_PREVIOUS =
      """
      {
        "version": 1,
        "id": "proxy-20049",
        "key": "fs-1|fsap-1|tls|iam=false|10.0.0.5|o",
        "port": 20049,
        "pid": 4242,
        "startTicks": 987654,
        "cgroup": "v2:/sys/fs/cgroup/efs-csi/proxy-20049",
        "config": {
          "control.socket": "/var/lib/efs-csi/proxies/proxy-20049.sock",
          "listen.port": "20049"
        },
        "users": [
          "/var/lib/kubelet/plugins/kubernetes.io/csi/efs.csi.aws.com/abc/globalmount"
        ],
        "restarts": 2,
        "createdMillis": 1764000000000
      }
      """;

  private static ProxyRecord base(Set<String> users) {
    return new ProxyRecord(
        "proxy-20049",
        "fs-1|fsap-1|tls|iam=false|10.0.0.5|o",
        20049,
        4242,
        987654,
        "v2:/sys/fs/cgroup/efs-csi/proxy-20049-b",
        Map.of("listen.port", "20049", "control.socket", "/state/proxy-20049.sock"),
        users,
        2,
        1764000000000L);
  }

  private static List<ProxyRecord> shapesThisBuildWrites() {
    ProxyRecord plain = base(Set.of("/stage/a", "/stage/b"));
    ProxyRecord built = plain.withBuild("0123456789ab");
    return List.of(
        plain,
        built,
        base(Set.of()).withBuild("0123456789ab"),
        built.withMove(
            Optional.of(
                new ProxyRecord.Move(
                    ProxyRecord.Move.LAUNCHING, 0, 0, "v2:/sys/fs/cgroup/efs-csi/proxy-20049"))),
        built.withMove(
            Optional.of(
                new ProxyRecord.Move(
                    ProxyRecord.Move.LAUNCHING,
                    5151,
                    99,
                    "v2:/sys/fs/cgroup/efs-csi/proxy-20049"))),
        built.withMove(
            Optional.of(
                new ProxyRecord.Move(
                    ProxyRecord.Move.RETIRING,
                    4141,
                    98,
                    "v2:/sys/fs/cgroup/efs-csi/proxy-20049"))));
  }

  @Test
  void thePreviousReleaseReadsEveryShapeThisBuildWrites() {
    for (ProxyRecord r : shapesThisBuildWrites()) {
      ReleasedRecordReader.Released old = ReleasedRecordReader.fromJson(r.toJson());
      assertEquals(
          new ReleasedRecordReader.Released(
              r.id(),
              r.key(),
              r.port(),
              r.pid(),
              r.startTicks(),
              r.cgroup(),
              r.config(),
              r.users(),
              r.restarts(),
              r.createdMillis()),
          old,
          r::toJson);
    }
  }

  @Test
  void thisBuildReadsWhatThePreviousReleaseWrote() {
    ProxyRecord r = ProxyRecord.fromJson(WRITTEN_BY_PREVIOUS);
    assertEquals(4242, r.pid());
    assertEquals("v2:/sys/fs/cgroup/efs-csi/proxy-20049", r.cgroup());
    assertEquals("", r.proxyBuild(), "no build: the proxy counts as another release's");
    assertEquals(Optional.empty(), r.move());
    assertEquals(r, ProxyRecord.fromJson(r.toJson()));
  }

  @Test
  void everyShapeRoundTrips() {
    for (ProxyRecord r : shapesThisBuildWrites()) {
      assertEquals(r, ProxyRecord.fromJson(r.toJson()), r::toJson);
    }
  }

  @Test
  void aNewerVersionIsReadWhenItsMinReaderAllowsAndRefusedOtherwise() {
    String json = base(Set.of("/s")).toJson().replace("\"version\": 1", "\"version\": 2");
    assertEquals(20049, ProxyRecord.fromJson(json).port(), "minReader 1: readable here");
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> ProxyRecord.fromJson(json.replace("\"minReader\": 1", "\"minReader\": 2")));
    assertEquals(
        "state record version 2 (readable from version 2) is not supported (this build reads 1-1)",
        e.getMessage());
  }

  @Test
  void aMoveWithAnUnknownPhaseIsRefusedNamingTheField() {
    String json =
        base(Set.of())
            .withMove(Optional.of(new ProxyRecord.Move(ProxyRecord.Move.RETIRING, 1, 2, "")))
            .toJson()
            .replace("\"retiring\"", "\"sideways\"");
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> ProxyRecord.fromJson(json));
    assertEquals(
        "state record field 'move.phase' must be launching or retiring, got sideways",
        e.getMessage());
  }
}
