package io.efscsi.node.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.efscsi.common.error.DriverException;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class VolumeHandleTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      nullValues = "-",
      value = {
        // handle | type | fs id | subpath | access point | export path
        "fs-abcd1234|EFS|fs-abcd1234|/|-|/",
        "fs-abcd1234:|EFS|fs-abcd1234|/|-|/",
        "fs-abcd1234::|EFS|fs-abcd1234|/|-|/",
        "fs-abcd1234:/a/b/|EFS|fs-abcd1234|/a/b|-|/a/b",
        "fs-abcd1234:a/b/:|EFS|fs-abcd1234|a/b|-|/a/b",
        "fs-abcd1234:/a/./b//c/../d|EFS|fs-abcd1234|/a/b/d|-|/a/b/d",
        "fs-abcd1234:../../x|EFS|fs-abcd1234|../../x|-|/x",
        "fs-abcd1234:/..|EFS|fs-abcd1234|/|-|/",
        "fs-abcd1234::fsap-abcd1234|EFS|fs-abcd1234|/|fsap-abcd1234|/",
        "fs-abcd1234:/a:fsap-abcd1234|EFS|fs-abcd1234|/a|fsap-abcd1234|/a",
        "fs-0123456789abcdef0123456789abcdef01234567::fsap-0123456789abcdef0|EFS|fs-0123456789abcdef0123456789abcdef01234567|/|fsap-0123456789abcdef0|/",
        "efs:fs-abcd1234|EFS|fs-abcd1234|/|-|/",
        "efs:fs-abcd1234::fsap-abcd1234|EFS|fs-abcd1234|/|fsap-abcd1234|/",
        "efs:fs-abcd1234:/data/shared:fsap-abcd1234|EFS|fs-abcd1234|/data/shared|fsap-abcd1234|/data/shared",
        "efs:fs-abcd1234::|EFS|fs-abcd1234|/|-|/",
        "s3files:fs-abcd1234|S3FILES|fs-abcd1234|/|-|/",
        "s3files:fs-abcd1234:/data/shared:fsap-abcd1234|S3FILES|fs-abcd1234|/data/shared|fsap-abcd1234|/data/shared",
      })
  void acceptsEveryGoForm(
      String id, VolumeHandle.Type type, String fs, String sub, String ap, String export) {
    VolumeHandle h = VolumeHandle.parse(id);
    assertEquals(new VolumeHandle(type, fs, sub, Optional.ofNullable(ap), Optional.empty()), h);
    assertEquals(export, h.exportPath());
  }

  /**
   * Mount-target DNS names in place of the id, as upstream v3.5.0's examples and tests use them.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      nullValues = "-",
      value = {
        "fs-9919e11b.efs.us-east-1.amazonaws.com|fs-9919e11b|/|-",
        "us-east-1a.fs-9919e11b.efs.us-east-1.amazonaws.com|fs-9919e11b|/|-",
        "fs-9919e11b.efs.us-east-1.amazonaws.com:/data|fs-9919e11b|/data|-",
        "fs-9919e11b.efs.cn-north-1.amazonaws.com.cn::fsap-0123456789abcdef0|fs-9919e11b|/|fsap-0123456789abcdef0",
        "efs:fs-9919e11b.efs.us-east-1.amazonaws.com|fs-9919e11b|/|-",
        "fs-9919e11b.example.com|fs-9919e11b|/|-",
      })
  void acceptsAMountTargetDnsNameAsTheGoDriverV350Does(
      String id, String fs, String sub, String ap) {
    VolumeHandle h = VolumeHandle.parse(id);
    assertEquals(fs, h.fileSystemId());
    assertEquals(sub, h.subPath());
    assertEquals(Optional.ofNullable(ap), h.accessPointId());
    assertEquals(Optional.of(id.replaceFirst("^efs:", "").split(":")[0]), h.dnsName());
  }

  /** Only DNS characters after the id: no comma, space, '=' or slash can carry a mount option. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "'fs-9919e11b.efs.us-east-1.amazonaws.com,nolock'",
        "'fs-9919e11b.efs.us-east-1.amazonaws.com ,vers=3'",
        "fs-9919e11b.efs.us-east-1.amazonaws.com.",
        "fs-9919e11b.",
        "FS-9919E11B.EFS.US-EAST-1.AMAZONAWS.COM",
        "a.b.fs-9919e11b.efs.us-east-1.amazonaws.com",
        "-a.fs-9919e11b.efs.us-east-1.amazonaws.com",
      })
  void refusesADnsNameThatIsNotOneAsTheGoDriverDoes(String id) {
    DriverException e = assertThrows(DriverException.class, () -> VolumeHandle.parse(id));
    assertEquals(
        "volume ID '"
            + id
            + "' is invalid: Expected a file system ID of the form"
            + " 'fs-[0-9a-f]{8,40}'",
        e.getMessage());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "invalid-id|volume ID 'invalid-id' is invalid: Expected a file system ID of the form 'fs-[0-9a-f]{8,40}'",
        "''|volume ID '' is invalid: Expected a file system ID of the form 'fs-[0-9a-f]{8,40}'",
        "fs-abc123|volume ID 'fs-abc123' is invalid: Expected a file system ID of the form 'fs-[0-9a-f]{8,40}'",
        "fs-ABCD1234|volume ID 'fs-ABCD1234' is invalid: Expected a file system ID of the form 'fs-[0-9a-f]{8,40}'",
        "fs-0123456789abcdef0123456789abcdef012345678|volume ID 'fs-0123456789abcdef0123456789abcdef012345678' is invalid: Expected a file system ID of the form 'fs-[0-9a-f]{8,40}'",
        "efs:invalid-id|volume ID 'efs:invalid-id' is invalid: Expected a file system ID of the form 'fs-[0-9a-f]{8,40}'",
        "efs|volume ID 'efs' is invalid: Expected a file system ID of the form 'fs-[0-9a-f]{8,40}'",
        "s3files:invalid-id|volume ID 's3files:invalid-id' is invalid: Expected a file system ID of the form 'fs-[0-9a-f]{8,40}'",
        "fs-abcd1234::invalid-id|volume ID 'fs-abcd1234::invalid-id' has an invalid access point ID 'invalid-id': Expected it to be of the form 'fsap-[0-9a-f]{8,40}'",
        "fs-abcd1234::fsap-abc|volume ID 'fs-abcd1234::fsap-abc' has an invalid access point ID 'fsap-abc': Expected it to be of the form 'fsap-[0-9a-f]{8,40}'",
        "efs:fs-abcd1234::invalid-id|volume ID 'efs:fs-abcd1234::invalid-id' has an invalid access point ID 'invalid-id': Expected it to be of the form 'fsap-[0-9a-f]{8,40}'",
        "s3files:fs-abcd1234::invalid-id|volume ID 's3files:fs-abcd1234::invalid-id' has an invalid access point ID 'invalid-id': Expected it to be of the form 'fsap-[0-9a-f]{8,40}'",
        "fs-abcd1234:/a/b/::four!|volume ID 'fs-abcd1234:/a/b/::four!' is invalid: Expected at most three fields separated by ':'",
        "nfs:fs-abcd1234::fsap-abcd1234|volume ID 'nfs:fs-abcd1234::fsap-abcd1234' is invalid: Expected at most three fields separated by ':'",
        "EFS:fs-abcd1234::fsap-abcd1234|volume ID 'EFS:fs-abcd1234::fsap-abcd1234' is invalid: Expected at most three fields separated by ':'",
        "efs:fs-abcd1234:/a:fsap-abcd1234:x|volume ID 'efs:fs-abcd1234:/a:fsap-abcd1234:x' is invalid: Expected at most four fields separated by ':'",
      })
  void rejectsWithTheGoMessages(String id, String message) {
    DriverException e = assertThrows(DriverException.class, () -> VolumeHandle.parse(id));
    assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind());
    assertEquals(message, e.getMessage());
  }

  @ParameterizedTest(name = "clean({0}) = {1}")
  @CsvSource({
    "'',.",
    "/,/",
    "abc,abc",
    "abc/def/,abc/def",
    "a//b,a/b",
    "./a,a",
    "a/./b,a/b",
    "a/..,.",
    "a/../..,..",
    "../../a,../../a",
    "/../a,/a",
    "//a//b//,/a/b",
    "/a/b/../../..,/",
    "a/b/../c/./d/,a/c/d",
  })
  void cleanPathIsGosPathClean(String in, String out) {
    assertEquals(out, GoSyntax.cleanPath(in));
  }

  @Test
  void typePrefixesAreTheGoDriversNames() {
    assertEquals("efs", VolumeHandle.Type.EFS.prefix());
    assertEquals("s3files", VolumeHandle.Type.S3FILES.prefix());
  }
}
