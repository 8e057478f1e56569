package io.efscsi.controller.k8s;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.efscsi.common.error.DriverException;
import io.efscsi.controller.provision.ProvisioningParameters.FileSystemRef;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** fileSystemIdConfigRef / SecretRef against fabric8's mock API server (real HTTP, real client). */
class KubernetesFileSystemIdsTest {

  private KubernetesMockServer server;
  private KubernetesFileSystemIds ids;

  @BeforeEach
  void start() {
    server = new KubernetesMockServer(false);
    server.init();
    ids = new KubernetesFileSystemIds(server::createClient);
  }

  @AfterEach
  void stop() {
    ids.close();
    server.destroy();
  }

  private void answer(String object, int code, Object body) {
    server
        .expect()
        .get()
        .withPath("/api/v1/namespaces/storage/" + object)
        .andReturn(code, body)
        .once();
  }

  private static ConfigMap configMap(String key, String value) {
    return new ConfigMapBuilder()
        .withNewMetadata()
        .withName("efs")
        .endMetadata()
        .addToData(key, value)
        .build();
  }

  @Test
  void readsTheKeyOfAConfigMapAndASecret() {
    answer("configmaps/efs", 200, configMap("fsid", " fs-0123456789abcdef0\n"));
    answer(
        "secrets/efs",
        200,
        new SecretBuilder()
            .withNewMetadata()
            .withName("efs")
            .endMetadata()
            .addToData(
                "fsid",
                Base64.getEncoder()
                    .encodeToString("fs-00000000aaaaaaaa1".getBytes(StandardCharsets.UTF_8)))
            .build());
    assertEquals(
        "fs-0123456789abcdef0",
        ids.resolve(new FileSystemRef.ConfigMapKey("storage", "efs", "fsid")));
    assertEquals(
        "fs-00000000aaaaaaaa1", ids.resolve(new FileSystemRef.SecretKey("storage", "efs", "fsid")));
  }

  @Test
  void missingObjectOrKeyIsAFailedPreconditionNamingIt() {
    answer("configmaps/efs", 200, configMap("other", "x"));
    DriverException noKey =
        assertThrows(
            DriverException.class,
            () -> ids.resolve(new FileSystemRef.ConfigMapKey("storage", "efs", "fsid")));
    assertEquals(DriverException.Kind.FAILED_PRECONDITION, noKey.kind());
    assertEquals(
        "Failed to resolve filesystem Id: key fsid not found or empty in ConfigMap storage/efs",
        noKey.getMessage());
    DriverException missing =
        assertThrows(
            DriverException.class,
            () -> ids.resolve(new FileSystemRef.SecretKey("storage", "gone", "fsid")));
    assertEquals(DriverException.Kind.FAILED_PRECONDITION, missing.kind());
    assertEquals(
        "Failed to resolve filesystem Id: failed to get fileSystemIdSecretRef storage/gone: not"
            + " found",
        missing.getMessage());
  }

  /**
   * The id ends up in AWS calls whose error text the provisioner puts on the claim's events: a
   * value that is not a file system id is refused first, and no message quotes it.
   */
  @Test
  void aValueThatIsNoFileSystemIdIsRefusedWithoutQuotingIt() {
    answer(
        "secrets/efs",
        200,
        new SecretBuilder()
            .withNewMetadata()
            .withName("efs")
            .endMetadata()
            .addToData(
                "fsid",
                Base64.getEncoder().encodeToString("hunter2".getBytes(StandardCharsets.UTF_8)))
            .build());
    answer("configmaps/efs", 200, configMap("fsid", "fs-0123456789ABCDEF0"));
    DriverException secret =
        assertThrows(
            DriverException.class,
            () -> ids.resolve(new FileSystemRef.SecretKey("storage", "efs", "fsid")));
    assertEquals(DriverException.Kind.INVALID_ARGUMENT, secret.kind());
    assertEquals(
        "Failed to resolve filesystem Id: key fsid in Secret storage/efs does not hold a file"
            + " system id (fs- and 8 to 40 lowercase hex digits); its value is not shown",
        secret.getMessage());
    assertFalse(secret.getMessage().contains("hunter2"), secret.getMessage());
    DriverException configMap =
        assertThrows(
            DriverException.class,
            () -> ids.resolve(new FileSystemRef.ConfigMapKey("storage", "efs", "fsid")));
    assertEquals(DriverException.Kind.INVALID_ARGUMENT, configMap.kind());
    assertFalse(configMap.getMessage().contains("ABCDEF"), configMap.getMessage());
  }

  @Test
  void forbiddenGetsTheRbacHint() {
    server
        .expect()
        .get()
        .withPath("/api/v1/namespaces/storage/secrets/efs")
        .andReturn(
            403,
            new StatusBuilder()
                .withCode(403)
                .withReason("Forbidden")
                .withMessage(
                    "secrets \"efs\" is forbidden: User \"system:serviceaccount:kube-system:efs-csi-controller-sa\" cannot get resource")
                .build())
        .once();
    DriverException e =
        assertThrows(
            DriverException.class,
            () -> ids.resolve(new FileSystemRef.SecretKey("storage", "efs", "fsid")));
    assertEquals(DriverException.Kind.PERMISSION_DENIED, e.kind());
    assertEquals(
        "Failed to resolve filesystem Id: fileSystemIdSecretRef 'storage/efs' is forbidden:"
            + " secrets \"efs\" is forbidden: User"
            + " \"system:serviceaccount:kube-system:efs-csi-controller-sa\" cannot get resource."
            + " This feature requires RBAC permissions (Helm:"
            + " controller.fileSystemIdRefs.enabled=true). See documentation for details",
        e.getMessage());
  }
}
