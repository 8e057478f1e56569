package io.efscsi.node.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.error.DriverException;
import io.efscsi.node.cloud.NodeMetadata;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MountPlannerTest {

  private static final String NAME = "fs-abcd1234.efs.us-east-1.amazonaws.com";

  /** Pinned by MountDefaultsTest. */
  private static final List<String> DEFAULTS = MountDefaults.DEFAULT.nfsOptions();

  private record Node(String region, Optional<String> availabilityZone) implements NodeMetadata {
    @Override
    public String nodeId() {
      return "i-0123456789abcdef0";
    }
  }

  private final InMemoryAws aws =
      new InMemoryAws()
          .resolves(NAME, "10.0.1.5")
          .resolves("fs-abcd5678.efs.us-east-1.amazonaws.com", "10.0.1.6")
          .resolves("fs-abcd1234.efs.eu-west-1.amazonaws.com", "10.8.1.5");
  private final MountPlanner planner =
      new MountPlanner(
          MountDefaults.DEFAULT,
          new Node("us-east-1", Optional.of("us-east-1a")),
          new MountTargetResolver(aws, aws));

  private MountPlan plan(String id, Map<String, String> ctx, List<String> flags, boolean ro) {
    return planner.plan(id, ctx, flags, ro);
  }

  private MountPlan plan(String id, String... flags) {
    return plan(id, Map.of(), List.of(flags), false);
  }

  private DriverException fails(String id, Map<String, String> ctx, String... flags) {
    return assertThrows(DriverException.class, () -> plan(id, ctx, List.of(flags), false));
  }

  @Test
  void plainVolumeIsTlsToTheRegionalNameWithOurDefaults() {
    MountPlan p = plan("fs-abcd1234");
    assertEquals(
        new MountPlan(
            "fs-abcd1234",
            Optional.empty(),
            "/",
            NAME,
            2049,
            true,
            NAME,
            false,
            Optional.empty(),
            true,
            MountPlan.IamCredentialsSource.DEFAULT_CHAIN,
            DEFAULTS,
            false,
            false),
        p);
  }

  @Test
  void accessPointAndSubpath() {
    MountPlan p = plan("efs:fs-abcd1234:/data/shared/:fsap-abcd1234");
    assertEquals(Optional.of("fsap-abcd1234"), p.accessPointId());
    assertEquals("/data/shared", p.exportPath());
    assertTrue(p.tls());
    MountPlan relative = plan("fs-abcd1234:a/b");
    assertEquals("/a/b", relative.exportPath());
  }

  @Test
  void readOnlyAddsRoAndReplacesRw() {
    MountPlan p = plan("fs-abcd1234", Map.of(), List.of("rw"), true);
    assertEquals("ro", p.nfsOptions().getLast());
    assertFalse(p.nfsOptions().contains("rw"));
    assertTrue(p.readOnly());
    assertTrue(plan("fs-abcd1234", "ro").readOnly());
    assertFalse(plan("fs-abcd1234").readOnly());
  }

  @Test
  void hardFromThePvReplacesSoftAndKeepsOurTimeouts() {
    assertEquals(
        List.of(
            "nfsvers=4.1",
            "rsize=1048576",
            "wsize=1048576",
            "hard",
            "timeo=50",
            "retrans=2",
            "noresvport"),
        plan("fs-abcd1234", "hard").nfsOptions());
    assertEquals(
        List.of(
            "nfsvers=4.1",
            "rsize=1048576",
            "wsize=1048576",
            "hard",
            "timeo=600",
            "retrans=2",
            "noresvport"),
        plan("fs-abcd1234", "HARD,TIMEO=600").nfsOptions());
  }

  @Test
  void userNfsOptionsOverrideOursInPlaceAndNewOnesFollow() {
    assertEquals(
        List.of(
            "vers=4.0",
            "rsize=65536",
            "wsize=1048576",
            "soft",
            "timeo=100",
            "retrans=5",
            "noresvport",
            "nconnect=4",
            "noac"),
        plan(
                "fs-abcd1234",
                "vers=4.0",
                "rsize=65536",
                "timeo=100,retrans=5",
                "nconnect=4",
                "ac",
                "noac")
            .nfsOptions());
  }

  @Test
  void nodeDefaultsComeFromTheFlag() {
    MountPlanner custom =
        new MountPlanner(
            MountDefaults.parse("nfsvers=4.1,hard,timeo=600"),
            new Node("us-east-1", Optional.of("us-east-1a")),
            new MountTargetResolver(aws, aws));
    assertEquals(
        List.of("nfsvers=4.1", "soft", "timeo=600"),
        custom.plan("fs-abcd1234", Map.of(), List.of("soft"), false).nfsOptions());
  }

  @Test
  void theMountTargetPortComesFromTheFlag() {
    MountPlanner gateway =
        new MountPlanner(
            MountDefaults.DEFAULT,
            new Node("us-east-1", Optional.of("us-east-1a")),
            new MountTargetResolver(aws, aws),
            12049);
    assertEquals(2049, plan("fs-abcd1234").upstreamPort());
    assertEquals(12049, gateway.plan("fs-abcd1234", Map.of(), List.of(), false).upstreamPort());
  }

  @Test
  void encryptInTransitFalseIsPlainUnlessThereIsAnAccessPoint() {
    assertFalse(plan("fs-abcd1234", Map.of("encryptInTransit", "false"), List.of(), false).tls());
    assertFalse(
        plan("fs-abcd1234", Map.of("encryptInTransit", "false"), List.of("notls"), false).tls());
    assertTrue(
        plan("fs-abcd1234::fsap-abcd1234", Map.of("encryptInTransit", "false"), List.of(), false)
            .tls());
    assertTrue(plan("fs-abcd1234", "tls").tls());
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "fs-abcd1234::fsap-abcd1234|true|accesspoint=fsap-deadbeef|Found conflicting access point IDs in mountOptions (fsap-deadbeef) and volumeHandle (fsap-abcd1234)",
        "fs-abcd1234|false|tls|Found tls in mountOptions but encryptInTransit is false",
        "fs-abcd1234|true|tls,notls|Found both tls and notls in mountOptions",
        "fs-abcd1234|true|notls|Found notls in mountOptions but encryptInTransit is true (the default); set encryptInTransit: \"false\" in volumeAttributes to mount without TLS",
        "fs-abcd1234::fsap-abcd1234|false|notls|Found notls in mountOptions but access point fsap-abcd1234 is only reachable over TLS",
        "fs-abcd1234|false|iam|mount option iam needs TLS, but encryptInTransit is false",
        "fs-abcd1234|true|awsprofile=prod|mount options awsprofile=, rolearn= and jwtpath= need the iam option",
        "fs-abcd1234|true|iam,rolearn=arn:aws:iam::1:role/r|mount options rolearn= and jwtpath= must be given together",
        "fs-abcd1234|true|iam,awsprofile=p,rolearn=arn:aws:iam::1:role/r,jwtpath=/t|mount options awsprofile= and rolearn=/jwtpath= cannot be used together",
        "fs-abcd1234|true|crossaccount,mounttargetip=10.0.0.1|crossaccount cannot be combined with mounttargetip or mounttargetipmap: it names the mount target by DNS",
      })
  void optionCombinationsThatFail(String id, boolean encrypt, String flags, String message) {
    DriverException e = fails(id, Map.of("encryptInTransit", Boolean.toString(encrypt)), flags);
    assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind());
    assertEquals(message, e.getMessage());
  }

  @Test
  void contextErrorsComeBeforeHandleErrorsAsInTheGoDriver() {
    assertEquals(
        "Volume context property asdf not supported.",
        fails("invalid-id", Map.of("asdf", "qwer")).getMessage());
  }

  @Test
  void crossAccountAttributeWithAnIpMapFails() {
    DriverException e =
        fails(
            "fs-abcd1234",
            Map.of("crossaccount", "true", "mounttargetipmap", "{\"us-east-1a\":\"10.0.0.1\"}"));
    assertTrue(e.getMessage().startsWith("crossaccount cannot be combined"), e.getMessage());
  }

  @Test
  void sameAccessPointInHandleAndOptionsIsAccepted() {
    assertEquals(
        Optional.of("fsap-abcd1234"),
        plan("fs-abcd1234::fsap-abcd1234", "tls", "accesspoint=fsap-abcd1234").accessPointId());
    assertEquals(
        Optional.of("fsap-abcd1234"),
        plan("fs-abcd1234", "accesspoint=fsap-abcd1234").accessPointId());
  }

  @Test
  void iamAndCredentialSources() {
    MountPlan p =
        plan(
            "fs-abcd1234",
            "iam",
            "rolearn=arn:aws:iam::123456789012:role/Efs",
            "jwtpath=/var/run/secrets/Token");
    assertTrue(p.iam());
    assertEquals(
        new MountPlan.IamCredentialsSource(
            Optional.empty(),
            Optional.of("arn:aws:iam::123456789012:role/Efs"),
            Optional.of("/var/run/secrets/Token")),
        p.credentials());
    assertEquals(
        Optional.of("Prod"), plan("fs-abcd1234", "iam,awsprofile=Prod").credentials().awsProfile());
    assertEquals(
        MountPlan.IamCredentialsSource.DEFAULT_CHAIN, plan("fs-abcd1234", "iam").credentials());
  }

  @Test
  void caFileAndVerifyApplyOnlyWithTls() {
    MountPlan p = plan("fs-abcd1234", "cafile=/etc/ca.pem", "verify=0");
    assertEquals(Optional.of(Path.of("/etc/ca.pem")), p.caFile());
    assertFalse(p.verifyHostname());
    assertTrue(plan("fs-abcd1234", "verify=2").verifyHostname());
    MountPlan plain =
        plan(
            "fs-abcd1234",
            Map.of("encryptInTransit", "false"),
            List.of("cafile=/etc/ca.pem"),
            false);
    assertEquals(Optional.empty(), plain.caFile());
  }

  @Test
  void mountTargetFromAttributeOptionAndMap() {
    assertEquals(
        "10.0.0.7",
        plan("fs-abcd1234", Map.of("mounttargetip", "10.0.0.7"), List.of(), false).upstreamHost());
    MountPlan both =
        plan(
            "fs-abcd1234",
            Map.of("mounttargetip", "10.0.0.7"),
            List.of("mounttargetip=10.0.0.8"),
            false);
    assertEquals("10.0.0.8", both.upstreamHost());
    assertEquals(NAME, both.serverName());
    assertEquals(
        "10.0.1.1",
        plan(
                "fs-abcd1234",
                Map.of(
                    "mounttargetipmap",
                    "{\"us-east-1b\":\"10.0.2.1\",\"us-east-1a\":\"10.0.1.1\"}"),
                List.of(),
                false)
            .upstreamHost());
  }

  @Test
  void regionOptionPointsAtAnotherRegion() {
    MountPlan p = plan("fs-abcd1234", "region=eu-west-1");
    assertEquals("fs-abcd1234.efs.eu-west-1.amazonaws.com", p.upstreamHost());
    assertEquals("fs-abcd1234.efs.eu-west-1.amazonaws.com", p.serverName());
  }

  @Test
  void aDnsNameHandleMountsAsItsFileSystemIdDoes() {
    MountPlan byName = plan(NAME + ":/data");
    assertEquals(plan("fs-abcd1234:/data"), byName);
    assertEquals("/data", byName.exportPath());
    assertEquals(NAME, byName.serverName());
  }

  @Test
  void aDnsNameHandleWithAZoneConnectsToThatZonesName() {
    aws.resolves("us-east-1b." + NAME, "10.0.2.5");
    MountPlan p = plan("us-east-1b." + NAME + "::fsap-0123456789abcdef0");
    assertEquals("us-east-1b." + NAME, p.upstreamHost());
    assertEquals(NAME, p.serverName(), "TLS checks the regional name");
    assertEquals(Optional.of("fsap-0123456789abcdef0"), p.accessPointId());
    assertEquals(p, plan("fs-abcd1234::fsap-0123456789abcdef0", "az=us-east-1b"));
  }

  @Test
  void aDnsNameHandleOfAnotherRegionNeedsTheRegionOption() {
    String other = "fs-abcd1234.efs.eu-west-1.amazonaws.com";
    assertEquals(
        "volume ID '"
            + other
            + "' names a mount target in region eu-west-1, but the volume is mounted in region"
            + " us-east-1 (the node's); to mount a file system of another region add the mount"
            + " option region=eu-west-1",
        fails(other, Map.of()).getMessage());
    assertEquals(other, plan(other, "region=eu-west-1").upstreamHost());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "fs-abcd1234.efs.us-east-1.amazonaws.com.cn|ends in amazonaws.com.cn, but mount targets in"
            + " us-east-1 are named *.amazonaws.com",
        "fs-abcd1234.nfs.example.com|which is not an EFS mount target name"
            + " ([<zone>.]fs-….efs.<region>.<suffix>); CNAMEs are not followed: use the file system"
            + " id fs-abcd1234 or its mount target name",
        "us-east-1b.fs-abcd1234.efs.us-east-1.amazonaws.com|names a mount target in us-east-1b, but"
            + " the mount option az= is us-east-1a",
        "s3files:fs-abcd1234.efs.us-east-1.amazonaws.com|an s3files: handle takes the file system"
            + " id (fs-…)",
      })
  void aDnsNameHandleThatCannotBeMountedAsItSaysIsRefusedNamingWhy(String id, String why) {
    DriverException e = fails(id, Map.of(), "az=us-east-1a");
    assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind());
    assertTrue(e.getMessage().startsWith("volume ID '" + id + "'"), e.getMessage());
    assertTrue(e.getMessage().endsWith(why), e.getMessage());
  }

  @Test
  void proxyKeysAreSharedExactlyWhenTheProxyWouldBeTheSame() {
    String base = plan("fs-abcd1234:/a").proxyKey();
    // Another PV on the same file system, other subpath and NFS options: same proxy.
    assertEquals(base, plan("fs-abcd1234:/b", "hard", "nconnect=2").proxyKey());
    assertEquals(base, plan("efs:fs-abcd1234", Map.of(), List.of(), true).proxyKey());
    // Access point, TLS, IAM, CA, upstream: different proxies.
    String ap1 = plan("fs-abcd1234::fsap-abcd1234").proxyKey();
    assertNotEquals(base, ap1);
    assertEquals(ap1, plan("fs-abcd1234:/x:fsap-abcd1234").proxyKey());
    assertNotEquals(ap1, plan("fs-abcd1234::fsap-abcd5678").proxyKey());
    assertNotEquals(
        base,
        plan("fs-abcd1234", Map.of("encryptInTransit", "false"), List.of(), false).proxyKey());
    assertNotEquals(base, plan("fs-abcd1234", "iam").proxyKey());
    assertNotEquals(base, plan("fs-abcd1234", "cafile=/etc/ca.pem").proxyKey());
    assertNotEquals(base, plan("fs-abcd1234", "mounttargetip=10.0.0.9").proxyKey());
    assertNotEquals(base, plan("fs-abcd5678").proxyKey());
  }
}
