package io.efscsi.node.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.error.DriverException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MountTargetResolverTest {

  private static final String FS = "fs-abcd1234";
  private static final String NAME = "fs-abcd1234.efs.us-east-1.amazonaws.com";

  private final InMemoryAws aws = new InMemoryAws();
  private final MountTargetResolver resolver = new MountTargetResolver(aws, aws);

  private static MountTargetResolver.Request request(
      Optional<String> ip, Map<String, String> map, Optional<String> az, boolean cross) {
    return new MountTargetResolver.Request(
        FS,
        "us-east-1",
        ip,
        new TreeMap<>(map),
        az,
        cross,
        Optional.of("us-east-1a"),
        Optional.empty());
  }

  private MountTargetResolver.MountTarget fromMap(Map<String, String> map) {
    return resolver.resolve(request(Optional.empty(), map, Optional.empty(), false));
  }

  private static MountTargetResolver.Request plain() {
    return request(Optional.empty(), Map.of(), Optional.empty(), false);
  }

  @ParameterizedTest
  @CsvSource({
    "us-east-1,fs-abcd1234.efs.us-east-1.amazonaws.com",
    "cn-north-1,fs-abcd1234.efs.cn-north-1.amazonaws.com.cn",
    "cn-northwest-1,fs-abcd1234.efs.cn-northwest-1.amazonaws.com.cn",
    "us-iso-east-1,fs-abcd1234.efs.us-iso-east-1.c2s.ic.gov",
    "us-isob-east-1,fs-abcd1234.efs.us-isob-east-1.sc2s.sgov.gov",
    "us-isof-south-1,fs-abcd1234.efs.us-isof-south-1.csp.hci.ic.gov",
    "eu-isoe-west-1,fs-abcd1234.efs.eu-isoe-west-1.cloud.adc-e.uk",
    "eusc-de-east-1,fs-abcd1234.efs.eusc-de-east-1.amazonaws.eu",
    "us-gov-west-1,fs-abcd1234.efs.us-gov-west-1.amazonaws.com",
  })
  void dnsNamesPerPartition(String region, String name) {
    assertEquals(name, EfsDnsNames.regional(FS, region));
    assertEquals("us-x-1a." + name, EfsDnsNames.zonal("us-x-1a", FS, region));
  }

  @Test
  void regionalNameWhenItResolves() {
    aws.resolves(NAME, "10.0.1.5");
    MountTargetResolver.MountTarget t = resolver.resolve(plain());
    assertEquals(NAME, t.host());
    assertEquals(NAME, t.serverName());
    assertEquals(List.of(), t.warnings());
    assertEquals(List.of("dns " + NAME), aws.calls);
  }

  @Test
  void mountTargetIpIsUsedWithoutAnyLookupButTlsStillChecksTheFsName() {
    MountTargetResolver.MountTarget t =
        resolver.resolve(
            request(
                Optional.of("10.9.9.9"),
                Map.of("us-east-1a", "10.0.0.1"),
                Optional.empty(),
                false));
    assertEquals("10.9.9.9", t.host());
    assertEquals(NAME, t.serverName());
    assertEquals(List.of(), aws.calls);
  }

  @Test
  void ipMapPicksTheNodesZone() {
    MountTargetResolver.MountTarget t =
        fromMap(Map.of("us-east-1b", "10.0.2.1", "us-east-1a", "10.0.1.1"));
    assertEquals("10.0.1.1", t.host());
    assertEquals(List.of(), t.warnings());
    assertEquals(List.of(), aws.calls);
  }

  @Test
  void ipMapWithoutTheNodesZoneFallsBackToTheFirstZoneWithAWarning() {
    MountTargetResolver.MountTarget t =
        fromMap(Map.of("us-east-1c", "10.0.3.1", "us-east-1b", "10.0.2.1"));
    assertEquals("10.0.2.1", t.host());
    assertEquals(
        List.of(
            "mounttargetipmap has no entry for this node's zone us-east-1a; using the mount"
                + " target of us-east-1b (10.0.2.1), traffic crosses zones"),
        t.warnings());
  }

  @Test
  void ipMapMatchesTheNodesZoneIdToo() {
    MountTargetResolver.MountTarget t =
        resolver.resolve(
            new MountTargetResolver.Request(
                FS,
                "us-east-1",
                Optional.empty(),
                new TreeMap<>(Map.of("use1-az4", "10.0.4.1", "use1-az1", "10.0.1.1")),
                Optional.empty(),
                false,
                Optional.of("us-east-1a"),
                Optional.of("use1-az4")));
    assertEquals("10.0.4.1", t.host());
  }

  @Test
  void azOptionUsesTheZonalName() {
    aws.resolves("us-east-1b." + NAME, "10.0.2.5");
    MountTargetResolver.MountTarget t =
        resolver.resolve(request(Optional.empty(), Map.of(), Optional.of("us-east-1b"), false));
    assertEquals("us-east-1b." + NAME, t.host());
    assertEquals(NAME, t.serverName());
  }

  @Test
  void crossAccountUsesTheNodesZoneIdFromEc2() {
    aws.zoneIds.put("us-east-1a", "use1-az6");
    aws.resolves("use1-az6." + NAME, "10.1.0.5");
    MountTargetResolver.MountTarget t =
        resolver.resolve(request(Optional.empty(), Map.of(), Optional.empty(), true));
    assertEquals("use1-az6." + NAME, t.host());
    assertEquals(NAME, t.serverName());
    assertEquals(
        List.of("DescribeAvailabilityZones us-east-1 us-east-1a", "dns use1-az6." + NAME),
        aws.calls);
  }

  @Test
  void crossAccountPrefersMetadataZoneIdAndNeverFallsBackToDescribe() {
    MountTargetResolver.Request r =
        new MountTargetResolver.Request(
            FS,
            "us-east-1",
            Optional.empty(),
            new TreeMap<>(),
            Optional.empty(),
            true,
            Optional.of("us-east-1a"),
            Optional.of("use1-az2"));
    DriverException e = assertThrows(DriverException.class, () -> resolver.resolve(r));
    assertEquals(DriverException.Kind.FAILED_PRECONDITION, e.kind());
    assertTrue(e.getMessage().contains("use1-az2." + NAME + " does not resolve"), e.getMessage());
    assertEquals(List.of("dns use1-az2." + NAME), aws.calls);
  }

  @Test
  void unresolvableNameFallsBackToTheMountTargetInTheNodesZone() {
    aws.mountTarget(FS, "fsmt-2", "us-east-1b", "use1-az2", "available", "10.0.2.9")
        .mountTarget(FS, "fsmt-1", "us-east-1a", "use1-az1", "available", "10.0.1.9");
    MountTargetResolver.MountTarget t = resolver.resolve(plain());
    assertEquals("10.0.1.9", t.host());
    assertEquals(NAME, t.serverName());
    assertEquals(List.of("dns " + NAME, "DescribeMountTargets us-east-1 " + FS), aws.calls);
    assertEquals(
        List.of(
            "the DNS name "
                + NAME
                + " does not resolve; connecting to mount target fsmt-1 at 10.0.1.9"),
        t.warnings());
  }

  @Test
  void noAvailableTargetInTheZoneUsesAnyAvailableOneWithAWarning() {
    aws.mountTarget(FS, "fsmt-1", "us-east-1a", "use1-az1", "deleting", "10.0.1.9")
        .mountTarget(FS, "fsmt-3", "us-east-1c", "use1-az3", "creating", "10.0.3.9")
        .mountTarget(FS, "fsmt-2", "us-east-1b", "use1-az2", "available", "10.0.2.9");
    MountTargetResolver.MountTarget t = resolver.resolve(plain());
    assertEquals("10.0.2.9", t.host());
    assertTrue(
        t.warnings()
            .contains(
                "no available mount target of fs-abcd1234 in this node's zone us-east-1a; using"
                    + " fsmt-2 in us-east-1b, traffic crosses zones"),
        t.warnings().toString());
  }

  @Test
  void ipv6OnlyMountTarget() {
    aws.mountTargets.put(
        FS,
        List.of(
            new MountTargetLookup.MountTargetDescription(
                "fsmt-1",
                "us-east-1a",
                "use1-az1",
                "available",
                Optional.empty(),
                Optional.of("2600:1f18::5"))));
    assertEquals("2600:1f18::5", resolver.resolve(plain()).host());
  }

  @Test
  void explicitAzWithoutAnAvailableTargetThereIsAnError() {
    aws.mountTarget(FS, "fsmt-1", "us-east-1a", "use1-az1", "available", "10.0.1.9")
        .mountTarget(FS, "fsmt-2", "us-east-1b", "use1-az2", "creating", "10.0.2.9");
    DriverException e =
        assertThrows(
            DriverException.class,
            () ->
                resolver.resolve(
                    request(Optional.empty(), Map.of(), Optional.of("us-east-1b"), false)));
    assertEquals(DriverException.Kind.UNAVAILABLE, e.kind());
    assertEquals(
        "the DNS name us-east-1b."
            + NAME
            + " does not resolve and file system fs-abcd1234 has no available mount target in"
            + " us-east-1b (fsmt-2 in us-east-1b is creating)",
        e.getMessage());
  }

  @Test
  void explicitAzMayBeAZoneId() {
    aws.mountTarget(FS, "fsmt-1", "us-east-1a", "use1-az1", "available", "10.0.1.9")
        .mountTarget(FS, "fsmt-2", "us-east-1b", "use1-az2", "available", "10.0.2.9");
    assertEquals(
        "10.0.2.9",
        resolver
            .resolve(request(Optional.empty(), Map.of(), Optional.of("use1-az2"), false))
            .host());
  }

  @Test
  void noMountTargetsAtAll() {
    DriverException e = assertThrows(DriverException.class, () -> resolver.resolve(plain()));
    assertEquals(DriverException.Kind.FAILED_PRECONDITION, e.kind());
    assertEquals(
        "the DNS name "
            + NAME
            + " does not resolve and file system fs-abcd1234 has no mount targets in us-east-1;"
            + " create one or set mounttargetip",
        e.getMessage());
  }

  @Test
  void noneAvailable() {
    aws.mountTarget(FS, "fsmt-1", "us-east-1a", "use1-az1", "creating", "10.0.1.9");
    DriverException e = assertThrows(DriverException.class, () -> resolver.resolve(plain()));
    assertEquals(DriverException.Kind.UNAVAILABLE, e.kind());
    assertEquals(
        "the DNS name "
            + NAME
            + " does not resolve and file system fs-abcd1234 has no available mount target"
            + " (fsmt-1 in us-east-1a is creating)",
        e.getMessage());
  }

  @Test
  void lookupFailuresPassThrough() {
    aws.failure =
        new DriverException(DriverException.Kind.FAILED_PRECONDITION, "denied by the test");
    DriverException e = assertThrows(DriverException.class, () -> resolver.resolve(plain()));
    assertEquals("denied by the test", e.getMessage());
  }
}
