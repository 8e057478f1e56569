package io.efscsi.node.takeover;

import static io.efscsi.node.takeover.EfsUtilsSamples.POD_TARGET;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.supervisor.host.MountInfo;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Finding the Go driver's mounts, and the no-double-ownership rule. */
class DiscoveryTest {

  static final Instant NOW = Instant.parse("2026-11-24T04:00:00Z");
  final Discovery discovery = new Discovery(Duration.ofSeconds(5));
  final EfsUtilsSamples sample = new EfsUtilsSamples();

  static MountInfo loopback(String mountPoint, int port, String path) {
    return new MountInfo(
        100 + port % 100,
        20,
        "0:" + port % 1000,
        path,
        mountPoint,
        "rw,relatime",
        List.of(),
        "nfs4",
        "127.0.0.1:" + path,
        "rw,vers=4.1,rsize=1048576,wsize=1048576,namlen=255,hard,noresvport,proto=tcp,port="
            + port
            + ",timeo=600,retrans=2,sec=sys,clientaddr=127.0.0.1,local_lock=none,addr=127.0.0.1");
  }

  EfsUtilsDirs.Stored stored(EfsUtilsSamples s, Duration age) {
    return new EfsUtilsDirs.Stored(
        s.stem(), s.port, s.state(), Optional.of(s.config()), NOW.minus(age));
  }

  List<Discovery.Finding> scan(List<MountInfo> table, Set<Integer> ours, boolean listening) {
    return discovery.scan(
        table, ours, List.of(stored(sample, Duration.ofSeconds(30))), p -> listening, NOW);
  }

  @Test
  void aMountWithoutItsProxyIsACandidateWithItsSubpath() {
    List<Discovery.Finding> f =
        scan(List.of(loopback(POD_TARGET, 20417, "/data/x")), Set.of(), false);
    Discovery.Candidate c = assertInstanceOf(Discovery.Candidate.class, f.getFirst());
    assertEquals(List.of(POD_TARGET), c.mountPoints());
    assertEquals(20417, c.state().port());
    assertEquals(1, f.size());
  }

  @Test
  void whileTheGoDriversProxyListensNothingIsTaken() {
    Discovery.Waiting w =
        assertInstanceOf(
            Discovery.Waiting.class,
            scan(List.of(loopback(POD_TARGET, 20417, "/")), Set.of(), true).getFirst());
    assertTrue(w.why().contains("listens on 127.0.0.1:20417"), w.why());
  }

  @Test
  void whileEfsUtilsWatchdogRewritesTheStateNothingIsTaken() {
    List<Discovery.Finding> f =
        discovery.scan(
            List.of(loopback(POD_TARGET, 20417, "/")),
            Set.of(),
            List.of(stored(sample, Duration.ofSeconds(1))),
            p -> false,
            NOW);
    Discovery.Waiting w = assertInstanceOf(Discovery.Waiting.class, f.getFirst());
    assertTrue(w.why().contains("watchdog wrote"), w.why());
  }

  @Test
  void portsOfOursAreNeverLookedAt() {
    assertEquals(List.of(), scan(List.of(loopback(POD_TARGET, 20417, "/")), Set.of(20417), false));
  }

  @Test
  void aPortWithoutStateOrWithTwoStatesIsLeftAloneWithTheReason() {
    Discovery.Refused r =
        assertInstanceOf(
            Discovery.Refused.class,
            scan(List.of(loopback("/mnt/x", 20500, "/")), Set.of(), false).getFirst());
    assertTrue(r.reason().contains("no efs-utils state names port 20500"), r.reason());
    assertEquals(List.of("/mnt/x"), r.mountPoints());

    EfsUtilsSamples other = new EfsUtilsSamples();
    other.mountPoint = "/mnt/y";
    List<Discovery.Finding> f =
        discovery.scan(
            List.of(loopback(POD_TARGET, 20417, "/")),
            Set.of(),
            List.of(stored(sample, Duration.ofMinutes(1)), stored(other, Duration.ofMinutes(1))),
            p -> false,
            NOW);
    r = assertInstanceOf(Discovery.Refused.class, f.getFirst());
    assertTrue(r.reason().contains("ambiguous"), r.reason());
  }

  @Test
  void unreadableStateIsRefused() {
    List<Discovery.Finding> f =
        discovery.scan(
            List.of(loopback(POD_TARGET, 20417, "/")),
            Set.of(),
            List.of(
                new EfsUtilsDirs.Stored(
                    sample.stem(), 20417, sample.state(), Optional.empty(), NOW.minusSeconds(60))),
            p -> false,
            NOW);
    Discovery.Refused r = assertInstanceOf(Discovery.Refused.class, f.getFirst());
    assertTrue(r.reason().contains("has no tunnel config"), r.reason());
  }

  @Test
  void plainMountsStraightToTheMountTargetNeedNothing() {
    MountInfo plain =
        new MountInfo(
            7,
            1,
            "0:77",
            "/",
            "/mnt/plain",
            "rw",
            List.of(),
            "nfs4",
            "fs-0123456789abcdef0.efs.us-east-1.amazonaws.com:/",
            "rw,vers=4.1,hard,proto=tcp,addr=10.0.1.17");
    List<Discovery.Finding> f = scan(List.of(plain), Set.of(), false);
    assertEquals(List.of(new Discovery.Plain("/mnt/plain", plain.source())), f);
  }
}
