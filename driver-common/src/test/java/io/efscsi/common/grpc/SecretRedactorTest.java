package io.efscsi.common.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import io.efscsi.csi.v1.CreateVolumeRequest;
import io.efscsi.csi.v1.Csi;
import io.efscsi.csi.v1.NodeGetCapabilitiesRequest;
import io.efscsi.csi.v1.NodeStageVolumeRequest;
import io.efscsi.csi.v1.ProbeRequest;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SecretRedactorTest {

  @Test
  void stripsSecretValuesKeepsKeysAndEverythingElse() {
    CreateVolumeRequest req =
        CreateVolumeRequest.newBuilder()
            .setName("pvc-1")
            .putParameters("fileSystemId", "fs-0123abcd")
            .putSecrets("awsRoleArn", "arn:aws:iam::123:role/x")
            .build();
    String line = SecretRedactor.toLogString(req);
    assertFalse(line.contains("arn:aws:iam::123:role/x"), line);
    assertTrue(line.contains("awsRoleArn"), line);
    assertTrue(line.contains(SecretRedactor.STRIPPED), line);
    assertTrue(line.contains("fs-0123abcd"), line);
    assertTrue(line.contains("pvc-1"), line);
  }

  @Test
  void messagesWithoutSecretsAreReturnedAsIs() {
    NodeGetCapabilitiesRequest req = NodeGetCapabilitiesRequest.getDefaultInstance();
    assertSame(req, SecretRedactor.redact(req));
    ProbeRequest probe = ProbeRequest.getDefaultInstance();
    assertEquals("", SecretRedactor.toLogString(probe));
  }

  /**
   * Every field the spec marks csi_secret, in every message of csi.proto, is stripped: fill each
   * such field with a marker and check the marker never survives.
   */
  @Test
  void everyCsiSecretFieldInTheSpecIsStripped() throws Exception {
    List<String> checked = new ArrayList<>();
    for (var type : Csi.getDescriptor().getMessageTypes()) {
      for (FieldDescriptor f : type.getFields()) {
        if (!f.getOptions().getExtension(Csi.csiSecret)) {
          continue;
        }
        Class<?> cls = Class.forName("io.efscsi.csi.v1." + type.getName());
        Message.Builder b = (Message.Builder) cls.getMethod("newBuilder").invoke(null);
        if (f.isMapField()) {
          Message.Builder entry = b.newBuilderForField(f);
          var d = entry.getDescriptorForType();
          entry.setField(d.findFieldByName("key"), "k");
          entry.setField(d.findFieldByName("value"), "MARKER-" + f.getFullName());
          b.addRepeatedField(f, entry.build());
        } else {
          b.setField(f, "MARKER-" + f.getFullName());
        }
        String line = SecretRedactor.toLogString(b.build());
        assertFalse(line.contains("MARKER"), f.getFullName() + " leaked: " + line);
        checked.add(f.getFullName());
      }
    }
    assertTrue(checked.size() >= 15, "expected the spec's secret fields, found " + checked);
    assertTrue(checked.contains("csi.v1.NodeStageVolumeRequest.secrets"));
  }

  @Test
  void originalMessageIsUntouched() {
    NodeStageVolumeRequest req = NodeStageVolumeRequest.newBuilder().putSecrets("a", "b").build();
    SecretRedactor.redact(req);
    assertEquals("b", req.getSecretsMap().get("a"));
  }
}
