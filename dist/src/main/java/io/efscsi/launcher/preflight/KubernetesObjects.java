package io.efscsi.launcher.preflight;

import io.efscsi.launcher.preflight.ClusterPreflight.StorageClassView;
import io.efscsi.launcher.preflight.ClusterPreflight.VolumeView;
import io.fabric8.kubernetes.api.model.CSIPersistentVolumeSource;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads the StorageClasses and PersistentVolumes with the operator's credentials (a kubeconfig
 * file, else the usual: {@code $KUBECONFIG}, {@code ~/.kube/config}, or in-cluster): two list
 * calls, nothing written. The views keep what the check reads.
 */
final class KubernetesObjects implements AutoCloseable {

  private final KubernetesClient client;

  KubernetesObjects(Optional<Path> kubeconfig) throws IOException {
    Config config =
        kubeconfig.isPresent()
            ? Config.fromKubeconfig(Files.readString(kubeconfig.get()))
            : Config.autoConfigure(null);
    this.client = new KubernetesClientBuilder().withConfig(config).build();
  }

  List<StorageClassView> storageClasses() {
    return client.storage().v1().storageClasses().list().getItems().stream()
        .map(KubernetesObjects::view)
        .toList();
  }

  List<VolumeView> volumes() {
    return client.persistentVolumes().list().getItems().stream()
        .map(KubernetesObjects::view)
        .toList();
  }

  private static StorageClassView view(StorageClass sc) {
    return new StorageClassView(
        sc.getMetadata().getName(),
        sc.getProvisioner(),
        orEmpty(sc.getParameters()),
        sc.getMountOptions() == null ? List.of() : sc.getMountOptions());
  }

  private static VolumeView view(PersistentVolume pv) {
    CSIPersistentVolumeSource csi = pv.getSpec() == null ? null : pv.getSpec().getCsi();
    return new VolumeView(
        pv.getMetadata().getName(),
        csi == null ? "" : csi.getDriver(),
        csi == null ? "" : csi.getVolumeHandle(),
        csi == null ? Map.of() : orEmpty(csi.getVolumeAttributes()),
        pv.getSpec() == null || pv.getSpec().getMountOptions() == null
            ? List.of()
            : pv.getSpec().getMountOptions());
  }

  private static Map<String, String> orEmpty(Map<String, String> m) {
    return m == null ? Map.of() : m;
  }

  @Override
  public void close() {
    client.close();
  }
}
