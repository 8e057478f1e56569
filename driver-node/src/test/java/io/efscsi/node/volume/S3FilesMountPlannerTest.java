package io.efscsi.node.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.error.DriverException;
import io.efscsi.node.cloud.NodeMetadata;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** {@code s3files:} handles: how the node plans an Amazon S3 Files mount, and what it refuses. */
class S3FilesMountPlannerTest {

  static final String SERVER = "fs-abcd1234.s3files.us-east-1.on.aws";
  static final String ZONAL = "use1-az1." + SERVER;

  private record Node(String region, Optional<String> availabilityZone) implements NodeMetadata {
    @Override
    public String nodeId() {
      return "i-0123456789abcdef0";
    }
  }

  private final InMemoryAws aws = new InMemoryAws().resolves(ZONAL, "10.0.1.5");
  private final MountPlanner planner =
      new MountPlanner(
          MountDefaults.DEFAULT,
          new Node("us-east-1", Optional.of("us-east-1a")),
          new MountTargetResolver(aws, aws));

  {
    aws.zoneIds.put("us-east-1a", "use1-az1");
  }

  private MountPlan plan(String id, Map<String, String> ctx, String... flags) {
    return planner.plan(id, ctx, List.of(flags), false);
  }

  private DriverException fails(String id, Map<String, String> ctx, String... flags) {
    return assertThrows(DriverException.class, () -> plan(id, ctx, flags));
  }

  @Test
  void aDynamicVolumeGoesToItsZonesS3FilesNameWithTlsIamAndNfs42() {
    MountPlan p = plan("s3files:fs-abcd1234::fsap-abcd1234", Map.of());
    assertTrue(p.s3files());
    assertEquals(ZONAL, p.upstreamHost());
    assertEquals(2049, p.upstreamPort());
    assertEquals(SERVER, p.serverName());
    assertTrue(p.tls());
    assertTrue(p.iam(), "mount.s3files always adds iam");
    assertEquals("s3files", p.signingName());
    assertEquals(Optional.of("fsap-abcd1234"), p.accessPointId());
    assertEquals("/", p.exportPath());
    List<String> defaults = MountDefaults.DEFAULT.nfsOptions();
    assertEquals(defaults.getFirst().replace("4.1", "4.2"), p.nfsOptions().getFirst());
    assertEquals(defaults.subList(1, defaults.size()), p.nfsOptions().subList(1, defaults.size()));
    assertTrue(p.proxyKey().startsWith("s3files:fs-abcd1234|fsap-abcd1234|"), p.proxyKey());
    assertEquals(
        List.of("DescribeAvailabilityZones us-east-1 us-east-1a", "dns " + ZONAL), aws.calls);
  }

  @Test
  void aStaticVolumeWithAMountTargetIpAndOptions() {
    MountPlan p =
        plan(
            "s3files:fs-abcd1234:/data",
            Map.of("mounttargetip", "10.0.9.9"),
            "nfsvers=4.1",
            "nodirects3read",
            "nos3readcache",
            "awsprofile=team",
            "tls");
    assertEquals("10.0.9.9", p.upstreamHost());
    assertEquals(SERVER, p.serverName());
    assertEquals("/data", p.exportPath());
    assertEquals("nfsvers=4.1", p.nfsOptions().getFirst());
    assertEquals(Optional.of("team"), p.credentials().awsProfile(), "iam is implied");
    assertEquals(List.of(), aws.calls, "no DNS, no lookup");
    // The EFS plan of the same file system shares nothing with it.
    MountPlan efs = plan("fs-abcd1234:/data", Map.of("mounttargetip", "10.0.9.9"));
    assertFalse(efs.s3files());
    assertEquals("elasticfilesystem", efs.signingName());
    assertFalse(efs.proxyKey().equals(p.proxyKey()));
  }

  @Test
  void azidNamesTheZoneAndOtherPartitionsHaveTheirSuffix() {
    aws.resolves("use1-az6." + SERVER, "10.0.6.6");
    assertEquals(
        "use1-az6." + SERVER,
        plan("s3files:fs-abcd1234", Map.of(), "azid=use1-az6").upstreamHost());
    aws.resolves("cnn1-az1.fs-abcd1234.s3files.cn-north-1.amazonaws.com.cn", "10.1.1.1");
    MountPlan cn = plan("s3files:fs-abcd1234", Map.of(), "azid=cnn1-az1", "region=cn-north-1");
    assertEquals("fs-abcd1234.s3files.cn-north-1.amazonaws.com.cn", cn.serverName());
  }

  @Test
  void aNameThatDoesNotResolveFailsAsMountS3filesDoes() {
    DriverException e = fails("s3files:fs-abcd1234", Map.of(), "azid=use1-az4");
    assertEquals(DriverException.Kind.FAILED_PRECONDITION, e.kind());
    assertEquals(
        "Failed to resolve \"use1-az4."
            + SERVER
            + "\" - check that your file system ID is correct, and ensure that the VPC has an"
            + " S3Files mount target for this file system ID (or set mounttargetip)",
        e.getMessage());
    assertFalse(aws.calls.stream().anyMatch(c -> c.startsWith("DescribeMountTargets")));
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "encryptInTransit|false||Encryption in transit cannot be disabled for S3 Files file system. Remove 'encryptInTransit: false' from your volume configuration or omit the encryptInTransit parameter (encryption is enabled by default).",
        "crossaccount|true||Cross-account mounting is not supported for S3 Files file system. Remove 'crossaccount: true' from your volume configuration.",
        "mounttargetip|10.0.0.1|stunnel|stunnel mount option is not supported by S3 Files file system.",
        "mounttargetip|10.0.0.1|az=us-east-1a|Unsupported mount options detected: \"az\"",
        "mounttargetip|10.0.0.1|crossaccount|Unsupported mount options detected: \"crossaccount\"",
        "mounttargetip|10.0.0.1|notls|Unsupported mount options detected: \"notls\"",
        "mounttargetip|10.0.0.1|nfsvers=4.0|NFSv4.0 is not supported for S3 Files mounts",
        "mounttargetip|10.0.0.1|vers=3|mount option 'vers=3' is invalid: EFS serves NFS 4.0 and 4.1 (expected 4, 4.0 or 4.1)",
        "mounttargetip|10.0.0.1|azid=use1 az1|mount option 'azid=use1 az1' is invalid: expected an availability zone id such as use1-az1",
        "mounttargetip|10.0.0.1|accesspoint=fsap-deadbeef|Found conflicting access point IDs in mountOptions (fsap-deadbeef) and volumeHandle (fsap-abcd1234)",
      })
  void whatS3FilesRefuses(String key, String value, String flag, String message) {
    String[] flags = flag == null ? new String[0] : new String[] {flag};
    DriverException e = fails("s3files:fs-abcd1234::fsap-abcd1234", Map.of(key, value), flags);
    assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind());
    assertEquals(message, e.getMessage());
  }

  @Test
  void vers42IsAcceptedForS3FilesOnly() {
    assertEquals(
        "vers=4.2",
        plan("s3files:fs-abcd1234", Map.of("mounttargetip", "10.0.0.1"), "vers=4.2")
            .nfsOptions()
            .getFirst());
    assertEquals(
        DriverException.Kind.INVALID_ARGUMENT,
        fails("fs-abcd1234", Map.of("mounttargetip", "10.0.0.1"), "vers=4.2").kind());
  }
}
