package io.efscsi.node.takeover;

import static io.efscsi.node.takeover.EfsUtilsSamples.AP;
import static io.efscsi.node.takeover.EfsUtilsSamples.DNS;
import static io.efscsi.node.takeover.EfsUtilsSamples.FS;
import static io.efscsi.node.takeover.EfsUtilsSamples.POD_TARGET;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.node.takeover.EfsUtilsSamples.Release;
import io.efscsi.node.volume.MountPlan.IamCredentialsSource;
import io.efscsi.proxy.config.ProxyConfig.BindProtocol;
import io.efscsi.supervisor.ProxySpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class TakeoverPlannerTest {

  @TempDir Path root;
  EfsUtilsDirs dirs;

  @BeforeEach
  void dirs() throws Exception {
    dirs = new EfsUtilsDirs(root.resolve("run"), root.resolve("var"), root.resolve("legacy"));
    Files.createDirectories(dirs.stateDir());
    Files.createDirectories(dirs.configDir());
    Files.createDirectories(dirs.legacyConfigDir());
  }

  @ParameterizedTest
  @EnumSource(Release.class)
  void theProxySpeaksWhatEfsUtilsTunnelSpoke(Release release) throws Exception {
    EfsUtilsSamples s = new EfsUtilsSamples().release(release);
    TakeoverPlan p = new TakeoverPlanner(dirs).plan(s.parse(), List.of(POD_TARGET));
    ProxySpec c = p.proxy();
    assertEquals(
        switch (release) {
          case V1_35_STUNNEL, V2_STUNNEL, V3_STUNNEL -> BindProtocol.NONE;
          case V2_PROXY -> BindProtocol.EFS_V2;
          case V3_PROXY -> BindProtocol.AWSFILE_V3;
        },
        c.bind());
    assertEquals(DNS, c.upstreamHost());
    assertEquals(2049, c.upstreamPort());
    assertTrue(c.tls());
    assertEquals(DNS, c.serverName());
    assertTrue(c.verifyHostname());
    assertEquals(Optional.empty(), c.caFile(), "efs-utils' default CA = our bundle");
    assertEquals(Optional.empty(), c.clientCertificate(), "made when the port is taken");
    assertEquals(20417, p.port());
    assertEquals(List.of(POD_TARGET), p.users());
    assertEquals("efs-utils:" + s.stem(), p.key());
    TakeoverPlan.Certificate cert = p.certificate().orElseThrow();
    assertEquals(FS, cert.fileSystemId());
    assertEquals("us-east-1", cert.region());
    assertFalse(cert.iam());
    assertEquals(Optional.empty(), cert.efsUtilsCertificate(), "none on this host");
  }

  @Test
  void efsUtilsFilesAreFoundWhereTheGoDriverLinkedThem() throws Exception {
    EfsUtilsSamples s = new EfsUtilsSamples();
    Path cert = dirs.stateDir().resolve(s.stem() + "+/certificate.pem");
    Files.createDirectories(cert.getParent());
    Files.writeString(cert, "cert");
    Files.writeString(dirs.configDir().resolve("privateKey.pem"), "var key");
    Files.writeString(dirs.legacyConfigDir().resolve("privateKey.pem"), "legacy key");
    Files.writeString(dirs.configDir().resolve("efs-utils.crt"), "roots");
    TakeoverPlan p = new TakeoverPlanner(dirs).plan(s.parse(), List.of(POD_TARGET));
    assertEquals(Optional.of(cert), p.certificate().get().efsUtilsCertificate());
    assertEquals(
        Optional.of(dirs.configDir().resolve("privateKey.pem")),
        p.certificate().get().efsUtilsKey(),
        "no efs-utils.conf in the legacy dir: the Go driver linked /var/amazon/efs");
    assertEquals(Optional.of(dirs.configDir().resolve("efs-utils.crt")), p.proxy().caFile());
    Files.writeString(dirs.legacyConfigDir().resolve("efs-utils.conf"), "[mount]");
    p = new TakeoverPlanner(dirs).plan(s.parse(), List.of(POD_TARGET));
    assertEquals(
        Optional.of(dirs.legacyConfigDir().resolve("privateKey.pem")),
        p.certificate().get().efsUtilsKey(),
        "an existing efs-utils.conf made the Go driver link the host's /etc/amazon/efs");
  }

  @Test
  void aCustomCaFileMustBeReadable() throws Exception {
    EfsUtilsSamples s = new EfsUtilsSamples();
    Path ca = root.resolve("my-ca.pem");
    s.caFile = ca.toString();
    UnusableStateException e =
        assertThrows(
            UnusableStateException.class,
            () -> new TakeoverPlanner(dirs).plan(s.parse(), List.of(POD_TARGET)));
    assertTrue(e.getMessage().contains("is not readable here"), e.getMessage());
    Files.writeString(ca, "ca");
    assertEquals(
        Optional.of(ca),
        new TakeoverPlanner(dirs).plan(s.parse(), List.of(POD_TARGET)).proxy().caFile());
  }

  @Test
  void accessPointAndIamKeepTheirIdentity() throws Exception {
    EfsUtilsSamples s = new EfsUtilsSamples();
    s.accessPoint = Optional.of(AP);
    s.credentialsMethod = Optional.of("webidentity:arn:aws:iam::1:role/r,/var/run/token");
    TakeoverPlan.Certificate c =
        new TakeoverPlanner(dirs).plan(s.parse(), List.of(POD_TARGET)).certificate().get();
    assertEquals(Optional.of(AP), c.accessPointId());
    assertTrue(c.iam());
    assertEquals(
        new IamCredentialsSource(
            Optional.empty(), Optional.of("arn:aws:iam::1:role/r"), Optional.of("/var/run/token")),
        c.credentials());
  }

  @Test
  void credentialSourcesMapToTheSameIdentity() throws Exception {
    assertEquals(Optional.of("dev"), TakeoverPlanner.credentials("credentials:dev").awsProfile());
    assertEquals(Optional.of("dev"), TakeoverPlanner.credentials("config:dev").awsProfile());
    assertEquals(Optional.of("dev"), TakeoverPlanner.credentials("named_profile:dev").awsProfile());
    assertEquals(IamCredentialsSource.DEFAULT_CHAIN, TakeoverPlanner.credentials("metadata:"));
    assertEquals(
        IamCredentialsSource.DEFAULT_CHAIN,
        TakeoverPlanner.credentials("podidentity:http://169.254.170.23/v1/credentials,/t"));
    assertThrows(UnusableStateException.class, () -> TakeoverPlanner.credentials("ecs:/v2/c"));
    assertThrows(UnusableStateException.class, () -> TakeoverPlanner.credentials("webidentity:x"));
  }

  @Test
  void plainMountsGetAPlainTunnel() throws Exception {
    EfsUtilsSamples s = new EfsUtilsSamples().release(Release.V2_PROXY);
    s.tls = false;
    s.connectHost = "10.0.1.17";
    TakeoverPlan p = new TakeoverPlanner(dirs).plan(s.parse(), List.of(POD_TARGET));
    assertFalse(p.proxy().tls());
    assertEquals("10.0.1.17", p.proxy().upstreamHost());
    assertEquals(BindProtocol.EFS_V2, p.proxy().bind());
    assertEquals(Optional.empty(), p.certificate());
  }

  @Test
  void theRecordedMountPointMustBeOnThePort() throws Exception {
    EfsUtilsSamples s = new EfsUtilsSamples();
    UnusableStateException e =
        assertThrows(
            UnusableStateException.class,
            () -> new TakeoverPlanner(dirs).plan(s.parse(), List.of("/mnt/other")));
    assertTrue(e.getMessage().contains("but the port carries /mnt/other"), e.getMessage());
  }
}
