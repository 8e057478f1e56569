package io.efscsi.controller.k8s;

import io.efscsi.common.error.DriverException;
import io.efscsi.controller.provision.FileSystemIds;
import io.efscsi.controller.provision.ProvisioningParameters.FileSystemRef;
import io.efscsi.controller.provision.VolumeId;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Reads fileSystemIdConfigRef / fileSystemIdSecretRef through fabric8 at CreateVolume time. The
 * client is built on first use, so a controller whose StorageClasses only use fileSystemId never
 * talks to the API server.
 */
public final class KubernetesFileSystemIds implements FileSystemIds, AutoCloseable {

  private final Supplier<KubernetesClient> factory;
  private volatile KubernetesClient client;

  public KubernetesFileSystemIds(Supplier<KubernetesClient> factory) {
    this.factory = factory;
  }

  @Override
  public String resolve(FileSystemRef ref) {
    return switch (ref) {
      case FileSystemRef.Literal l -> l.id();
      case FileSystemRef.ConfigMapKey c -> {
        ConfigMap cm = get("fileSystemIdConfigRef", c.namespace(), c.name(), true);
        Map<String, String> data = cm == null ? null : cm.getData();
        yield value(
            data == null ? null : data.get(c.key()), c.key(), "ConfigMap", c.namespace(), c.name());
      }
      case FileSystemRef.SecretKey s -> {
        Secret secret = get("fileSystemIdSecretRef", s.namespace(), s.name(), false);
        Map<String, String> data = secret == null ? null : secret.getData();
        String encoded = data == null ? null : data.get(s.key());
        String decoded =
            encoded == null
                ? null
                : new String(Base64.getDecoder().decode(encoded), StandardCharsets.UTF_8);
        yield value(decoded, s.key(), "Secret", s.namespace(), s.name());
      }
    };
  }

  @SuppressWarnings("unchecked")
  private <T> T get(String kind, String namespace, String name, boolean configMap) {
    try {
      KubernetesClient k = client();
      Object o =
          configMap
              ? k.configMaps().inNamespace(namespace).withName(name).get()
              : k.secrets().inNamespace(namespace).withName(name).get();
      if (o == null) {
        throw DriverException.failedPrecondition(
            "Failed to resolve filesystem Id: failed to get %s %s/%s: not found",
            kind, namespace, name);
      }
      return (T) o;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 403) {
        throw new DriverException(
            DriverException.Kind.PERMISSION_DENIED,
            String.format(
                "Failed to resolve filesystem Id: %s '%s/%s' is forbidden: %s. This feature"
                    + " requires RBAC permissions (Helm: controller.fileSystemIdRefs.enabled=true)."
                    + " See documentation for details",
                kind,
                namespace,
                name,
                e.getStatus() == null ? e.getMessage() : e.getStatus().getMessage()),
            e);
      }
      throw new DriverException(
          DriverException.Kind.UNAVAILABLE,
          String.format(
              "Failed to resolve filesystem Id: failed to get %s %s/%s: %s",
              kind, namespace, name, e.getMessage()),
          e);
    }
  }

  private static String value(String v, String key, String kind, String ns, String name) {
    String id = v == null ? "" : v.strip();
    if (id.isEmpty()) {
      throw DriverException.failedPrecondition(
          "Failed to resolve filesystem Id: key %s not found or empty in %s %s/%s",
          key, kind, ns, name);
    }
    if (!VolumeId.isFileSystemId(id)) {
      // Never the value: it may be a secret, and this message reaches the claim's events.
      throw DriverException.invalidArgument(
          "Failed to resolve filesystem Id: key %s in %s %s/%s does not hold a file system id"
              + " (fs- and 8 to 40 lowercase hex digits); its value is not shown",
          key, kind, ns, name);
    }
    return id;
  }

  private KubernetesClient client() {
    KubernetesClient c = client;
    if (c == null) {
      synchronized (this) {
        if (client == null) {
          client = factory.get();
        }
        c = client;
      }
    }
    return c;
  }

  @Override
  public void close() {
    KubernetesClient c = client;
    if (c != null) {
      c.close();
    }
  }
}
