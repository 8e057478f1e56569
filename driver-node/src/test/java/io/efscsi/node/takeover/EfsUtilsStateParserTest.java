package io.efscsi.node.takeover;

import static io.efscsi.node.takeover.EfsUtilsSamples.AP;
import static io.efscsi.node.takeover.EfsUtilsSamples.DNS;
import static io.efscsi.node.takeover.EfsUtilsSamples.FS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.node.takeover.EfsUtilsSamples.Release;
import io.efscsi.node.takeover.EfsUtilsState.Tunnel;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class EfsUtilsStateParserTest {

  @ParameterizedTest
  @EnumSource(Release.class)
  void everyReleaseLineIsReadWithItsTunnel(Release release) throws Exception {
    EfsUtilsSamples s = new EfsUtilsSamples().release(release);
    EfsUtilsState st = s.parse();
    Tunnel expected =
        switch (release) {
          case V1_35_STUNNEL, V2_STUNNEL, V3_STUNNEL -> Tunnel.STUNNEL;
          case V2_PROXY -> Tunnel.EFS_PROXY_V2;
          case V3_PROXY -> Tunnel.EFS_PROXY_V3;
        };
    assertEquals(expected, st.tunnel());
    assertEquals(FS, st.fileSystemId());
    assertEquals(EfsUtilsSamples.POD_TARGET, st.mountPoint());
    assertEquals(20417, st.port());
    assertEquals(DNS, st.upstreamHost());
    assertEquals(2049, st.upstreamPort());
    assertTrue(st.tls());
    assertEquals(Optional.of(DNS), st.checkHost());
    assertEquals(OptionalInt.of(2), st.verifyLevel());
    assertEquals(Optional.of("/etc/amazon/efs/efs-utils.crt"), st.caFile());
    assertEquals(Optional.of("/var/run/efs/" + s.stem() + "+/certificate.pem"), st.certificate());
    assertEquals(Optional.of("/etc/amazon/efs/privateKey.pem"), st.privateKey());
    assertEquals(Optional.of("us-east-1"), st.region());
    assertEquals(Optional.empty(), st.accessPointId());
    assertFalse(st.iam());
    assertEquals(4711, st.tunnelPid());
  }

  @Test
  void theStemIsAmbiguousSoTheRecordedMountPointDecides() throws Exception {
    EfsUtilsSamples s = new EfsUtilsSamples();
    // "kubernetes.io~csi" and "pv-efs.data" put dots into the stem that are not slashes
    assertTrue(s.stem().contains("kubernetes.io~csi.pv-efs.data.mount.20417"));
    assertEquals(EfsUtilsSamples.POD_TARGET, s.parse().mountPoint());
    String slash = EfsUtilsSamples.POD_TARGET.replace("efs.data", "efs/data");
    String other =
        s.state()
            .replace(
                "\"mountpoint\": \"" + EfsUtilsSamples.POD_TARGET, "\"mountpoint\": \"" + slash);
    assertEquals(
        slash,
        EfsUtilsStateParser.parse(s.stem(), other, s.config()).mountPoint(),
        "same stem, another mount point: the state says which");
    String unrelated =
        s.state()
            .replace("\"mountpoint\": \"" + EfsUtilsSamples.POD_TARGET, "\"mountpoint\": \"/mnt/x");
    UnusableStateException e =
        assertThrows(
            UnusableStateException.class,
            () -> EfsUtilsStateParser.parse(s.stem(), unrelated, s.config()));
    assertTrue(e.getMessage().contains("does not match its mount point"), e.getMessage());
  }

  @ParameterizedTest
  @EnumSource(Release.class)
  void accessPointAndIamAreRead(Release release) throws Exception {
    EfsUtilsSamples s = new EfsUtilsSamples().release(release);
    s.accessPoint = Optional.of(AP);
    s.credentialsMethod =
        Optional.of(
            "webidentity:arn:aws:iam::111122223333:role/efs-csi,"
                + "/var/run/secrets/eks.amazonaws.com/serviceaccount/token");
    EfsUtilsState st = s.parse();
    assertEquals(Optional.of(AP), st.accessPointId());
    assertTrue(st.iam());
  }

  @Test
  void accessPointWithoutIam() throws Exception {
    EfsUtilsSamples s = new EfsUtilsSamples().release(Release.V2_PROXY);
    s.accessPoint = Optional.of(AP);
    EfsUtilsState st = s.parse();
    assertEquals(Optional.of(AP), st.accessPointId());
    assertFalse(st.iam());
  }

  @Test
  void mountTargetIpAzAndCrossAccountChangeOnlyTheConnectHost() throws Exception {
    for (String host : new String[] {"10.0.1.17", "us-east-1a." + DNS, "use1-az4." + DNS}) {
      EfsUtilsSamples s = new EfsUtilsSamples();
      s.connectHost = host;
      EfsUtilsState st = s.parse();
      assertEquals(host, st.upstreamHost());
      assertEquals(Optional.of(DNS), st.checkHost(), "efs-utils strips the AZ from checkHost");
    }
  }

  @Test
  void plainEfsProxyMountsHaveNoCertificate() throws Exception {
    for (Release r : new Release[] {Release.V2_PROXY, Release.V3_PROXY}) {
      EfsUtilsSamples s = new EfsUtilsSamples().release(r);
      s.tls = false;
      EfsUtilsState st = s.parse();
      assertFalse(st.tls());
      assertEquals(Optional.empty(), st.certificate());
      assertEquals(Optional.empty(), st.caFile());
      assertEquals(Optional.empty(), st.checkHost());
      assertEquals(r == Release.V3_PROXY ? Tunnel.EFS_PROXY_V3 : Tunnel.EFS_PROXY_V2, st.tunnel());
    }
  }

  @Test
  void aHostMountPointWithADot() throws Exception {
    EfsUtilsSamples s = new EfsUtilsSamples().release(Release.V1_35_STUNNEL);
    s.mountPoint = "/mnt/.efs";
    assertEquals(FS + ".mnt..efs.20417", s.stem());
    assertEquals("/mnt/.efs", s.parse().mountPoint());
  }

  @Test
  void whatCannotBeReproducedIsRefusedWithTheReason() {
    EfsUtilsSamples s = new EfsUtilsSamples();
    assertRefused(s.stem(), s.state(), s.config().replace("fips = no", "fips = yes"), "FIPS");
    assertRefused(s.stem(), s.state(), s.config() + "\nOCSPaia = yes", "OCSP");
    assertRefused(
        s.stem(),
        s.state().replace("\"cmd\": [", "\"cmd\": [\"nsenter\", \"--net=/proc/1/ns/net\", "),
        s.config(),
        "network namespace");
    assertRefused(
        s.stem(),
        s.state().replace("\"elasticfilesystem\"", "\"s3files\""),
        s.config(),
        "only Amazon EFS");
    assertRefused(
        s.stem(),
        s.state(),
        s.config().replace("accept = 127.0.0.1:20417", "accept = 127.0.0.1:20418"),
        "names port 20417");
    assertRefused(
        s.stem(),
        s.state(),
        s.config().replace("fs_id = " + FS, "fs_id = fs-0fedcba9876543210"),
        "names file system fs-0fedcba9876543210");
    assertRefused(
        s.stem(),
        s.state(),
        s.config().replace("checkHost = " + DNS, "checkHost = fs-0fedcba9876543210.efs.x"),
        "checks server name");
    assertRefused(
        s.stem(),
        s.state().replace("\"certificate\": \"/var/run/efs/", "\"certificate\": \"/tmp/"),
        s.config(),
        "different client certificates");
    assertRefused(
        s.stem(),
        s.state().replace("\"/usr/bin/efs-proxy\"", "\"/usr/bin/socat\""),
        s.config(),
        "neither stunnel nor efs-proxy");
    assertRefused(s.stem(), "{\"pid\": 1", s.config(), "not JSON");
    assertRefused(s.stem(), s.state(), "accept = 127.0.0.1:20417", "no [efs] section");
    assertRefused("fs-12.mnt", s.state(), s.config(), "is not <fs-id>.<mount point>.<port>");
    EfsUtilsSamples ap = new EfsUtilsSamples();
    ap.accessPoint = Optional.of("fsap-123");
    assertRefused(ap.stem(), ap.state(), ap.config(), "is not fsap-<17 hex>");
  }

  /** What EfsUtilsStateParserFuzzTest found read that no tunnel could have run with. */
  @Test
  void portsAndVerifyLevelsAreWhatATunnelRunsWith() throws Exception {
    for (int port : new int[] {0, 65536, 99999}) {
      EfsUtilsSamples s = new EfsUtilsSamples();
      s.port = port;
      assertRefused(s.stem(), s.state(), s.config(), "names port " + port);
    }
    for (String port : List.of("0", "+2049", "-1", "65536", "\u0662\u0660\u0664\u0669")) {
      EfsUtilsSamples s = new EfsUtilsSamples();
      s.connectPort = port;
      assertRefused(s.stem(), s.state(), s.config(), "connect is not a port: " + port);
    }
    for (String port : List.of("2:2222", ":2049")) {
      EfsUtilsSamples s = new EfsUtilsSamples().release(Release.V2_PROXY);
      s.tls = false;
      s.connectPort = port;
      assertRefused(s.stem(), s.state(), s.config(), "not a DNS name or IPv4 address");
    }
    for (String level : List.of("-1", "5", "+2", "02")) {
      EfsUtilsSamples s = new EfsUtilsSamples();
      s.verify = level;
      assertRefused(s.stem(), s.state(), s.config(), "not a stunnel verify level (0-4): " + level);
    }
    EfsUtilsSamples s = new EfsUtilsSamples();
    s.verify = "0";
    assertEquals(OptionalInt.of(0), s.parse().verifyLevel());
    s.mountPoint = "/mnt/a\u2028b\u0085c";
    assertEquals("/mnt/a\u2028b\u0085c", s.parse().mountPoint(), "line separators in the name");
  }

  @Test
  void fileSafeNamesAreEfsUtils() {
    assertEquals("mnt.efs", EfsUtilsStateParser.fileSafe("/mnt/efs"));
    assertEquals("mnt..efs", EfsUtilsStateParser.fileSafe("/mnt/.efs"));
    assertEquals(OptionalInt.of(20049), EfsUtilsStateParser.portOf(FS + ".mnt.efs.20049"));
    assertEquals(OptionalInt.empty(), EfsUtilsStateParser.portOf("stunnel-config.x"));
  }

  private static void assertRefused(String stem, String state, String config, String reason) {
    UnusableStateException e =
        assertThrows(
            UnusableStateException.class, () -> EfsUtilsStateParser.parse(stem, state, config));
    assertTrue(e.getMessage().contains(reason), e.getMessage() + " should say " + reason);
  }
}
