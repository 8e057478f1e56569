package io.efscsi.node.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.error.DriverException;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class VolumeContextTest {

  @Test
  void emptyContextEncryptsAndUsesDns() {
    assertEquals(VolumeContext.DEFAULT, VolumeContext.parse(Map.of()));
    assertTrue(VolumeContext.DEFAULT.encryptInTransit());
  }

  @ParameterizedTest
  @CsvSource({
    "encryptInTransit,true,true",
    "encryptInTransit,false,false",
    "EncryptInTransit,0,false",
    "encryptintransit,F,false",
    "ENCRYPTINTRANSIT,TRUE,true",
    "encryptInTransit,t,true",
    "encryptInTransit,1,true",
  })
  void encryptInTransitTakesGoBooleans(String key, String value, boolean expected) {
    assertEquals(expected, VolumeContext.parse(Map.of(key, value)).encryptInTransit());
  }

  @ParameterizedTest
  @CsvSource({"crossaccount,true,true", "crossAccount,True,true", "CROSSACCOUNT,false,false"})
  void crossAccountTakesGoBooleans(String key, String value, boolean expected) {
    assertEquals(expected, VolumeContext.parse(Map.of(key, value)).crossAccount());
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "encryptInTransit|asdf|Volume context property \"encryptInTransit\" must be a boolean value: strconv.ParseBool: parsing \"asdf\": invalid syntax",
        "encryptInTransit|yes|Volume context property \"encryptInTransit\" must be a boolean value: strconv.ParseBool: parsing \"yes\": invalid syntax",
        "encryptInTransit|' true'|Volume context property \"encryptInTransit\" must be a boolean value: strconv.ParseBool: parsing \" true\": invalid syntax",
        "crossaccount|on|Volume context property \"crossaccount\" must be a boolean value: strconv.ParseBool: parsing \"on\": invalid syntax",
        "mounttargetip|not-an-ip|Volume context property \"mounttargetip\"=\"not-an-ip\" is not a valid IP address",
        "mounttargetip|10.0.0.1,uid=0,gid=0,port=12345|Volume context property \"mounttargetip\"=\"10.0.0.1,uid=0,gid=0,port=12345\" is not a valid IP address",
        "mounttargetip|fs-abcd1234.efs.us-east-1.amazonaws.com|Volume context property \"mounttargetip\"=\"fs-abcd1234.efs.us-east-1.amazonaws.com\" is not a valid IP address",
        "MountTargetIp|010.0.0.1|Volume context property \"MountTargetIp\"=\"010.0.0.1\" is not a valid IP address",
        "path|a/b|Volume context property path not supported.",
        "Path|/a|Volume context property Path not supported.",
        "asdf|qwer|Volume context property asdf not supported.",
        "fileSystemId|fs-abcd1234|Volume context property fileSystemId not supported.",
      })
  void rejectsWithTheGoMessages(String key, String value, String message) {
    DriverException e =
        assertThrows(DriverException.class, () -> VolumeContext.parse(Map.of(key, value)));
    assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind());
    assertEquals(message, e.getMessage());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "127.0.0.1",
        "10.0.2.1",
        "0.0.0.0",
        "2600:1f14:abc:1234::1",
        "::1",
        "::ffff:10.0.0.1"
      })
  void mountTargetIpTakesIpLiterals(String ip) {
    assertEquals(Optional.of(ip), VolumeContext.parse(Map.of("mounttargetip", ip)).mountTargetIp());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "1.2.3",
        "1.2.3.4.5",
        "256.1.1.1",
        "1.2.3.04",
        "[::1]",
        "fe80::1%eth0",
        "localhost",
        "1:2:3:4:5:6:7:8:9",
        "10.0.0.1 "
      })
  void notIpLiterals(String s) {
    assertFalse(GoSyntax.isIpLiteral(s), s);
  }

  @ParameterizedTest
  @ValueSource(strings = {"storage.kubernetes.io/csiProvisionerIdentity", "csiProvisionerIdentity"})
  void provisionerIdentityIsIgnored(String key) {
    assertEquals(
        VolumeContext.DEFAULT, VolumeContext.parse(Map.of(key, "1700000000000-efs.csi.aws.com")));
  }

  @Test
  void dynamicProvisioningContext() {
    VolumeContext c =
        VolumeContext.parse(
            Map.of(
                "storage.kubernetes.io/csiprovisioneridentity", "efs.csi.aws.com",
                "mounttargetip", "127.0.0.1"));
    assertEquals(Optional.of("127.0.0.1"), c.mountTargetIp());
  }

  @Test
  void keysDifferingInCaseMustAgree() {
    Map<String, String> agree =
        new TreeMap<>(Map.of("encryptInTransit", "false", "encryptintransit", "false"));
    assertFalse(VolumeContext.parse(agree).encryptInTransit());
    Map<String, String> disagree =
        new TreeMap<>(Map.of("encryptInTransit", "false", "encryptintransit", "true"));
    DriverException e = assertThrows(DriverException.class, () -> VolumeContext.parse(disagree));
    assertEquals(
        "Volume context properties encryptInTransit and encryptintransit are the same property"
            + " with different values (\"false\", \"true\")",
        e.getMessage());
  }

  @Test
  void mountTargetIpMapIsParsedAndSorted() {
    VolumeContext c =
        VolumeContext.parse(
            Map.of(
                "mounttargetipmap",
                " {\"us-west-2c\":\"10.0.3.1\", \"us-west-2a\" : \"10.0.1.1\",\n"
                    + "\"us-west-2b\":\"2600:1f14::1\"} "));
    assertEquals(
        Map.of("us-west-2a", "10.0.1.1", "us-west-2b", "2600:1f14::1", "us-west-2c", "10.0.3.1"),
        c.mountTargetIpMap());
    assertEquals("us-west-2a", c.mountTargetIpMap().firstKey());
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "{\"us-west-2a\":\"10.0.1.1,uid=0,gid=0,port=12345\"}|Volume context property \"mounttargetipmap\" has an invalid IP address \"10.0.1.1,uid=0,gid=0,port=12345\" for availability zone \"us-west-2a\"",
        "{\"us-west-2a\":\"10.0.1.1,uid=0\",\"us-west-2b\":\"10.0.2.1\"}|Volume context property \"mounttargetipmap\" has an invalid IP address \"10.0.1.1,uid=0\" for availability zone \"us-west-2a\"",
        "{\"us-west-2a\":\"10.0.1.1\\u002cuid=0\"}|Volume context property \"mounttargetipmap\" has an invalid IP address \"10.0.1.1,uid=0\" for availability zone \"us-west-2a\"",
        "{\"us-west-2a\":\"not-an-ip\"}|Volume context property \"mounttargetipmap\" has an invalid IP address \"not-an-ip\" for availability zone \"us-west-2a\"",
        "{\"us-west-2a\":\"\"}|Volume context property \"mounttargetipmap\" has an invalid IP address \"\" for availability zone \"us-west-2a\"",
        "{\"us-west-2a\":null}|Volume context property \"mounttargetipmap\" has an invalid IP address \"\" for availability zone \"us-west-2a\"",
        "{\"us-west-2a\":\"10.0.1.1\",\"us-west-2b\":123}|Volume context property \"mounttargetipmap\" must be a JSON object of availability zone to IP address: the value of \"us-west-2b\" is not a string",
        "{invalid|Volume context property \"mounttargetipmap\" must be a JSON object of availability zone to IP address: invalid JSON at offset 1: expected a key",
        "[]|Volume context property \"mounttargetipmap\" must be a JSON object of availability zone to IP address: not an object",
        "{\"a\":\"10.0.0.1\"} x|Volume context property \"mounttargetipmap\" must be a JSON object of availability zone to IP address: invalid JSON at offset 17: trailing characters",
        "{\"a\":\"10.0.0.1\"|Volume context property \"mounttargetipmap\" must be a JSON object of availability zone to IP address: invalid JSON at offset 15: expected '}'",
        "{}|Volume context property \"mounttargetipmap\" has no availability zone entries",
      })
  void mountTargetIpMapIsCheckedEntryByEntry(String json, String message) {
    DriverException e =
        assertThrows(
            DriverException.class, () -> VolumeContext.parse(Map.of("mounttargetipmap", json)));
    assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind());
    assertEquals(message, e.getMessage());
  }

  @Test
  void jsonEscapesAreDecodedBeforeTheCheck() {
    assertEquals(
        Map.of("us-west-2a", "10.0.1.1"),
        VolumeContext.parse(Map.of("mounttargetipmap", "{\"us-west-2\\u0061\":\"10.0.1.\\u0031\"}"))
            .mountTargetIpMap());
  }

  static final Map<String, String> POD_INFO =
      Map.of(
          VolumeContext.POD_NAME, "writer-0",
          VolumeContext.POD_NAMESPACE, "team-a",
          VolumeContext.POD_UID, "6f1c1f36-0d0e-4bb7-9a57-1c9a1b4ad9e1",
          VolumeContext.SERVICE_ACCOUNT_NAME, "default",
          VolumeContext.EPHEMERAL, "false");

  @Test
  void kubeletsPodInfoIsAcceptedAndIgnoredForTheMount() {
    assertEquals(VolumeContext.DEFAULT, VolumeContext.parse(POD_INFO));
    Map<String, String> withOthers = new java.util.HashMap<>(POD_INFO);
    withOthers.put("encryptInTransit", "false");
    assertFalse(VolumeContext.parse(withOthers).encryptInTransit());
  }

  @Test
  void thePodRefNeedsNamespaceNameAndUid() {
    assertEquals(
        Optional.of(new PodRef("team-a", "writer-0", "6f1c1f36-0d0e-4bb7-9a57-1c9a1b4ad9e1")),
        VolumeContext.podRef(POD_INFO));
    for (String key :
        java.util.List.of(
            VolumeContext.POD_NAME, VolumeContext.POD_NAMESPACE, VolumeContext.POD_UID)) {
      Map<String, String> without = new java.util.HashMap<>(POD_INFO);
      without.remove(key);
      assertEquals(Optional.empty(), VolumeContext.podRef(without), key);
      without.put(key, "");
      assertEquals(Optional.empty(), VolumeContext.podRef(without), key);
    }
    assertEquals(Optional.empty(), VolumeContext.podRef(Map.of("encryptInTransit", "x")));
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "csi.storage.k8s.io/ephemeral|true|Volume context property \"csi.storage.k8s.io/ephemeral\"=\"true\" is not supported: the driver mounts persistent volumes only, not inline ephemeral volumes (use a PersistentVolumeClaim)",
        "CSI.storage.k8s.io/Ephemeral|1|Volume context property \"CSI.storage.k8s.io/Ephemeral\"=\"1\" is not supported: the driver mounts persistent volumes only, not inline ephemeral volumes (use a PersistentVolumeClaim)",
        "csi.storage.k8s.io/ephemeral|maybe|Volume context property \"csi.storage.k8s.io/ephemeral\" must be a boolean value: strconv.ParseBool: parsing \"maybe\": invalid syntax",
      })
  void anInlineEphemeralVolumeIsRefused(String key, String value, String message) {
    Map<String, String> ctx = new java.util.HashMap<>(POD_INFO);
    ctx.remove(VolumeContext.EPHEMERAL);
    ctx.put(key, value);
    for (org.junit.jupiter.api.function.Executable call :
        java.util.List.<org.junit.jupiter.api.function.Executable>of(
            () -> VolumeContext.parse(ctx), () -> VolumeContext.podRef(ctx))) {
      DriverException e = assertThrows(DriverException.class, call);
      assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind());
      assertEquals(message, e.getMessage());
    }
  }
}
