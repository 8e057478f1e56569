package io.efscsi.controller.provision;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.error.DriverException;
import io.efscsi.controller.provision.ProvisioningParameters.FileSystemRef;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ProvisioningParametersTest {

  static Map<String, String> base(String... kv) {
    Map<String, String> m = new HashMap<>();
    m.put("provisioningMode", "efs-ap");
    m.put("fileSystemId", "fs-0123456789abcdef0");
    m.put("directoryPerms", "700");
    for (int i = 0; i < kv.length; i += 2) {
      if (kv[i + 1] == null) {
        m.remove(kv[i]);
      } else {
        m.put(kv[i], kv[i + 1]);
      }
    }
    return m;
  }

  static Stream<Arguments> rejected() {
    return Stream.of(
        Arguments.of(base("provisioningMode", null), "Missing provisioningMode parameter"),
        Arguments.of(
            base("provisioningMode", "efs-dir"),
            "Provisioning mode efs-dir is not supported. Only Access point provisioning 'efs-ap'"
                + " or 's3files-ap' are supported"),
        Arguments.of(
            base("fileSystemId", null),
            "Failed to resolve filesystem Id: one of fileSystemId, fileSystemIdConfigRef, or"
                + " fileSystemIdSecretRef must be specified"),
        Arguments.of(
            base("fileSystemId", "  "),
            "Failed to resolve filesystem Id: one of fileSystemId, fileSystemIdConfigRef, or"
                + " fileSystemIdSecretRef must be specified"),
        Arguments.of(
            base("fileSystemIdConfigRef", "ns/cm/key"),
            "Failed to resolve filesystem Id: only one of fileSystemId, fileSystemIdConfigRef, or"
                + " fileSystemIdSecretRef can be specified"),
        Arguments.of(
            base("fileSystemId", null, "fileSystemIdSecretRef", "ns/secret"),
            "Failed to resolve filesystem Id: invalid fileSystemIdSecretRef reference: invalid"
                + " reference format, expected namespace/name/key, got: ns/secret"),
        Arguments.of(
            base("fileSystemId", null, "fileSystemIdConfigRef", "ns//key"),
            "Failed to resolve filesystem Id: invalid fileSystemIdConfigRef reference: namespace,"
                + " name, and key must be non-empty in reference: ns//key"),
        Arguments.of(
            base("uid", "abc"),
            "Failed to parse invalid uid: strconv.ParseInt: parsing \"abc\": invalid syntax"),
        Arguments.of(base("uid", "-1"), "uid must be greater or equal than 0"),
        Arguments.of(
            base("gid", "99999999999999999999"),
            "Failed to parse invalid gid: strconv.ParseInt: parsing \"99999999999999999999\":"
                + " value out of range"),
        Arguments.of(base("gid", "-5"), "gid must be greater or equal than 0"),
        Arguments.of(
            base("gidRangeStart", "1.5", "gidRangeEnd", "9"),
            "Failed to parse invalid gidRangeStart: strconv.ParseInt: parsing \"1.5\": invalid"
                + " syntax"),
        Arguments.of(
            base("gidRangeStart", "0", "gidRangeEnd", "9"), "gidRangeStart must be greater than 0"),
        Arguments.of(base("gidRangeEnd", "9"), "Missing gidRangeStart parameter"),
        Arguments.of(base("gidRangeStart", "9"), "Missing gidRangeEnd parameter"),
        Arguments.of(
            base("gidRangeStart", "100", "gidRangeEnd", "100"),
            "gidRangeEnd must be greater than gidRangeStart"),
        Arguments.of(
            base("gidRangeStart", "100", "gidRangeEnd", "x"),
            "Failed to parse invalid gidRangeEnd: strconv.ParseInt: parsing \"x\": invalid syntax"),
        Arguments.of(
            base("directoryPerms", null),
            "Missing directoryPerms parameter (the octal mode of each new access point directory,"
                + " such as 700)"),
        Arguments.of(
            base("directoryPerms", "rwx"),
            "directoryPerms must be an octal mode of 3 or 4 digits such as 700, got 'rwx'"),
        Arguments.of(
            base("directoryPerms", "789"),
            "directoryPerms must be an octal mode of 3 or 4 digits such as 700, got '789'"),
        Arguments.of(
            base("reuseAccessPoint", "yes"), "Invalid value for reuseAccessPoint parameter"),
        Arguments.of(
            base("enforceZoneAffinity", "on"), "Invalid value for enforceZoneAffinity parameter"),
        Arguments.of(base("enableTagging", "nope"), "Invalid value for enableTagging parameter"),
        Arguments.of(
            base("provisioningMode", "s3files-ap", "reuseAccessPoint", "true"),
            "Parameter reuseAccessPoint is only supported for EFS file systems, not supported for"
                + " s3files file systems"),
        // Refused whatever the value, as the Go driver checks presence, not the value.
        Arguments.of(
            base("provisioningMode", "s3files-ap", "reuseAccessPoint", "false"),
            "Parameter reuseAccessPoint is only supported for EFS file systems, not supported for"
                + " s3files file systems"),
        Arguments.of(
            base("provisioningMode", "s3files-ap", "az", "us-east-1a"),
            "Parameter az is only supported for EFS file systems, not supported for s3files file"
                + " systems"),
        Arguments.of(
            base("provisioningMode", "s3files-ap", "az", ""),
            "Parameter az is only supported for EFS file systems, not supported for s3files file"
                + " systems"),
        Arguments.of(
            base("onDelete", "shred"),
            "Invalid value for onDelete parameter: 'shred' (expected delete, retain or archive)"),
        Arguments.of(
            base("onDelete", ""),
            "Invalid value for onDelete parameter: '' (expected delete, retain or archive)"),
        Arguments.of(
            base("onDelete", "archive", "enableTagging", "false"),
            "onDelete archive needs enableTagging: the choice is kept as the access point's tag"
                + " efs.csi.aws.com/on-delete, and enableTagging is false"),
        Arguments.of(
            base("provisioningMode", "s3files-ap", "onDelete", "delete"),
            "onDelete delete is not supported for s3files file systems: their directories are"
                + " never removed nor renamed; use retain or leave onDelete out"),
        Arguments.of(
            base("provisioningMode", "s3files-ap", "onDelete", "Archive"),
            "onDelete Archive is not supported for s3files file systems: their directories are"
                + " never removed nor renamed; use retain or leave onDelete out"));
  }

  @Test
  void onDeleteIsReadInAnyCaseAndAbsentUnlessGiven() {
    assertEquals(Optional.empty(), ProvisioningParameters.parse(base()).onDelete());
    assertEquals(
        Optional.of(OnDelete.DELETE),
        ProvisioningParameters.parse(base("onDelete", "delete")).onDelete());
    assertEquals(
        Optional.of(OnDelete.RETAIN),
        ProvisioningParameters.parse(base("onDelete", "Retain")).onDelete());
    assertEquals(
        Optional.of(OnDelete.ARCHIVE),
        ProvisioningParameters.parse(base("onDelete", " ARCHIVE ")).onDelete());
    assertEquals(
        Optional.of(OnDelete.RETAIN),
        ProvisioningParameters.parse(base("provisioningMode", "s3files-ap", "onDelete", "retain"))
            .onDelete());
    assertEquals(OnDelete.DELETE, OnDelete.byFlag(true));
    assertEquals(OnDelete.RETAIN, OnDelete.byFlag(false));
  }

  @ParameterizedTest
  @MethodSource
  void rejected(Map<String, String> params, String message) {
    DriverException e =
        assertThrows(DriverException.class, () -> ProvisioningParameters.parse(params));
    assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind());
    assertEquals(message, e.getMessage());
  }

  /** Every rule the Go driver shares between efs-ap and s3files-ap answers the same for both. */
  @ParameterizedTest
  @MethodSource("rejected")
  void s3filesSharesEveryEfsRule(Map<String, String> params, String message) {
    if (!"efs-ap".equals(params.get("provisioningMode"))
        || params.containsKey("reuseAccessPoint")) {
      return; // the mode rules themselves, and reuseAccessPoint (refused for S3 Files: below)
    }
    Map<String, String> s3 = new HashMap<>(params);
    s3.put("provisioningMode", "s3files-ap");
    DriverException e = assertThrows(DriverException.class, () -> ProvisioningParameters.parse(s3));
    assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind());
    assertEquals(message, e.getMessage());
  }

  @Test
  void s3filesAcceptsTheSharedParameters() {
    ProvisioningParameters p =
        ProvisioningParameters.parse(
            base(
                "provisioningMode", "s3files-ap",
                "uid", "1000",
                "gid", "2000",
                "basePath", "/k8s",
                "subPathPattern", "${.PVC.namespace}",
                "ensureUniqueDirectory", "false",
                "enforceZoneAffinity", "true",
                "enableTagging", "false"));
    assertEquals(ProvisioningParameters.Backend.S3FILES, p.backend());
    assertEquals(OptionalLong.of(1000), p.uid());
    assertEquals(OptionalLong.of(2000), p.gid());
    assertEquals("/k8s", p.basePath());
    assertFalse(p.ensureUniqueDirectory());
    assertTrue(p.enforceZoneAffinity());
    assertFalse(p.enableTagging());
    assertFalse(p.reuseAccessPoint());
    assertEquals(
        ProvisioningParameters.Backend.EFS, ProvisioningParameters.parse(base()).backend());
  }

  @Test
  void defaultsFollowTheGoDriverCode() {
    ProvisioningParameters p = ProvisioningParameters.parse(base());
    assertEquals(new FileSystemRef.Literal("fs-0123456789abcdef0"), p.fileSystem());
    assertEquals(50_000, p.gidMin());
    assertEquals(60_000, p.gidMax());
    assertEquals(OptionalLong.empty(), p.uid());
    assertTrue(p.ensureUniqueDirectory());
    assertFalse(p.reuseAccessPoint());
    assertTrue(p.enableTagging());
    assertFalse(p.enforceZoneAffinity());
    assertEquals("", p.basePath());
  }

  @Test
  void acceptedValues() {
    ProvisioningParameters p =
        ProvisioningParameters.parse(
            base(
                "uid", "+0",
                "gid", "1001",
                "gidRangeStart", "1000",
                "gidRangeEnd", "2000",
                "directoryPerms", "0750",
                "reuseAccessPoint", "T",
                "enforceZoneAffinity", "1",
                "enableTagging", "False",
                "az", "us-east-1b",
                "unknownKey", "ignored like the Go driver"));
    assertEquals(OptionalLong.of(0), p.uid());
    assertEquals(OptionalLong.of(1001), p.gid());
    assertEquals(1000, p.gidMin());
    assertEquals(2000, p.gidMax());
    assertTrue(p.reuseAccessPoint());
    assertTrue(p.enforceZoneAffinity());
    assertFalse(p.enableTagging());
    assertEquals("us-east-1b", p.az().orElseThrow());
    assertEquals(
        new FileSystemRef.SecretKey("kube-system", "efs", "fsid"),
        ProvisioningParameters.parse(
                base("fileSystemId", null, "fileSystemIdSecretRef", " kube-system / efs / fsid "))
            .fileSystem());
  }

  @Test
  void ensureUniqueDirectoryIsOffOnlyForAValueThatReadsFalse() {
    assertFalse(
        ProvisioningParameters.parse(base("ensureUniqueDirectory", "false"))
            .ensureUniqueDirectory());
    assertFalse(
        ProvisioningParameters.parse(base("ensureUniqueDirectory", "0")).ensureUniqueDirectory());
    assertTrue(
        ProvisioningParameters.parse(base("ensureUniqueDirectory", "nope"))
            .ensureUniqueDirectory());
    assertTrue(
        ProvisioningParameters.parse(base("ensureUniqueDirectory", "true"))
            .ensureUniqueDirectory());
  }

  static Stream<Arguments> paths() {
    return Stream.of(
        Arguments.of(base(), "/pvc-1"),
        Arguments.of(base("basePath", "/dynamic/"), "/dynamic/pvc-1"),
        Arguments.of(base("basePath", "a/../b"), "/b/pvc-1"),
        Arguments.of(
            base(
                "subPathPattern", "${.PVC.namespace}/${.PVC.name}",
                "ensureUniqueDirectory", "false",
                "csi.storage.k8s.io/pvc/name", "data",
                "csi.storage.k8s.io/pvc/namespace", "team"),
            "/team/data"),
        Arguments.of(
            base("subPathPattern", "${.PV.name}", "csi.storage.k8s.io/pv/name", "pvc-1"),
            "/pvc-1-" + java.util.UUID.nameUUIDFromBytes("efs-csi-java/pvc-1".getBytes())));
  }

  @ParameterizedTest
  @MethodSource
  void paths(Map<String, String> params, String expected) {
    assertEquals(expected, AccessPointPath.of(ProvisioningParameters.parse(params), "pvc-1"));
  }

  static Stream<Arguments> badPaths() {
    return Stream.of(
        Arguments.of(
            base("subPathPattern", "${.PVC.labels}"),
            "Path specified ${.PVC.labels} contains invalid elements"),
        Arguments.of(
            base("subPathPattern", "${.PVC.name}"),
            "subPathPattern '${.PVC.name}' uses ${.PVC.name} but the request has no"
                + " csi.storage.k8s.io/pvc/name parameter: run csi-provisioner with"
                + " --extra-create-metadata"),
        Arguments.of(
            base("basePath", "a/b/c/d/e"),
            "Proposed path '/a/b/c/d/e/pvc-1' exceeds file system limit of 4 subdirectories"),
        Arguments.of(
            base("basePath", "x".repeat(95)),
            "Proposed path '/"
                + "x".repeat(95)
                + "/pvc-1' exceeds file system limit of 100 characters"));
  }

  @ParameterizedTest
  @MethodSource
  void badPaths(Map<String, String> params, String message) {
    DriverException e =
        assertThrows(
            DriverException.class,
            () -> AccessPointPath.of(ProvisioningParameters.parse(params), "pvc-1"));
    assertEquals(message, e.getMessage());
  }
}
