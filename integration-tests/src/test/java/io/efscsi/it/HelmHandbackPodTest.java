package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.efscsi.common.config.FlagSet;
import io.efscsi.node.HandbackCommand;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The handback pod (templates/handback-pod.yaml, docs/migration.md "Rollback without draining"):
 * rendered only when asked for one node, an object the API accepts, arguments the launcher takes,
 * and no more privilege than the handback needs (docs/security.md).
 */
class HelmHandbackPodTest {

  static final Map<String, Object> ASKED =
      Map.of("handback.node", "ip-10-0-1-23.ec2.internal", "handback.goDriver", "v3.4.1");

  @Test
  void noInstallRendersItWithAnyValuesFile() {
    HelmChartTest.matrix()
        .forEach(values ->
            assertTrue(
                HelmChartTest.render(values).stream().noneMatch(Pod.class::isInstance),
                values + " renders no handback pod"));
  }

  @Test
  void askedForANodeItIsOnePodTheApiAcceptsWithArgumentsTheLauncherTakes() throws Exception {
    String rendered = HelmChartTest.template("defaults", ASKED);
    List<String> docs = HelmChartTest.documents(rendered);
    List<HasMetadata> all = HelmChartTest.render("defaults", ASKED);
    Pod pod = HelmChartTest.one(all, Pod.class);
    ObjectMapper raw = new ObjectMapper(new YAMLFactory());
    for (String doc : docs) {
      if (doc.contains("kind: Pod")) {
        assertEquals(List.of(), KubernetesSchemas.get().errors(raw.readTree(doc)));
      }
    }
    assertEquals("efs-csi-handback-ip-10-0-1-23.ec2.internal", pod.getMetadata().getName());
    PodSpec spec = pod.getSpec();
    assertEquals("ip-10-0-1-23.ec2.internal", spec.getNodeName());
    assertEquals("Never", spec.getRestartPolicy());
    Container c = HelmChartTest.container(spec, "handback");
    List<String> args = c.getArgs();
    assertEquals("handback", args.getFirst());
    var flags = new FlagSet().addAll(HandbackCommand.FLAGS).parse(args.subList(1, args.size()));
    assertEquals("v3.4.1", flags.string("go-driver"));
    assertEquals("/var/run/efs-csi", flags.string("state-dir"));
    assertFalse(flags.bool("go-on"));
    assertEquals("", flags.string("tunnel-binary"), "the image's own path unless asked");
    assertTrue(
        HelmChartTest.refusal(Map.of("handback.node", "n1"))
            .contains("handback.goDriver must name the Go driver release"));
    List<String> goOn =
        HelmChartTest.container(
                HelmChartTest.one(
                        HelmChartTest.render(
                            "defaults",
                            Map.of(
                                "handback.node", "n1",
                                "handback.goDriver", "2.1.15",
                                "handback.goOn", true,
                                "handback.wait", "1h",
                                "handback.tunnelBinary", "/usr/bin/efs-proxy")),
                        Pod.class)
                    .getSpec(),
                "handback")
            .getArgs();
    assertTrue(
        goOn.containsAll(
            List.of(
                "--go-on",
                "--wait=1h",
                "--go-driver=2.1.15",
                "--tunnel-binary=/usr/bin/efs-proxy")),
        "" + goOn);
    assertTrue(
        HelmChartTest.refusal(
                Map.of(
                    "handback.node", "n1",
                    "handback.goDriver", "v3.4.1",
                    "handback.tunnelBinary", "efs-proxy"))
            .contains("tunnelBinary"),
        "a relative path is refused by the schema: the watchdog runs it as written");
  }

  @Test
  void itHoldsNoPrivilegeBeyondTheFilesAndTheHostsLoopback() {
    PodSpec spec = HelmChartTest.one(HelmChartTest.render("defaults", ASKED), Pod.class).getSpec();
    assertTrue(spec.getHostNetwork(), "the kernel's connections to 127.0.0.1 are watched");
    assertNull(spec.getHostPID(), "no host PID namespace");
    assertFalse(spec.getAutomountServiceAccountToken(), "no Kubernetes API token");
    assertEquals("efs-csi-node-sa", spec.getServiceAccountName(), "the node's IAM identity");
    Container c = HelmChartTest.container(spec, "handback");
    var sc = c.getSecurityContext();
    assertNull(sc.getPrivileged());
    assertFalse(sc.getAllowPrivilegeEscalation());
    assertTrue(sc.getReadOnlyRootFilesystem());
    assertEquals(List.of("ALL"), sc.getCapabilities().getDrop());
    assertTrue(sc.getCapabilities().getAdd() == null || sc.getCapabilities().getAdd().isEmpty());
    Map<String, String> hostPaths =
        spec.getVolumes().stream()
            .filter(v -> v.getHostPath() != null)
            .collect(Collectors.toMap(Volume::getName, v -> v.getHostPath().getPath()));
    assertEquals(
        Map.of(
            "kubelet-dir", "/var/lib/kubelet",
            "proxy-state", "/var/run/efs-csi",
            "efs-state-dir", "/var/run/efs",
            "efs-utils-config", "/var/amazon/efs",
            "efs-utils-config-legacy", "/etc/amazon/efs"),
        hostPaths);
    Map<String, VolumeMount> mounts =
        c.getVolumeMounts().stream().collect(Collectors.toMap(VolumeMount::getName, m -> m));
    assertTrue(mounts.get("kubelet-dir").getReadOnly(), "the pods' volumes are only looked at");
    assertEquals("HostToContainer", mounts.get("kubelet-dir").getMountPropagation());
    assertEquals("/etc/amazon/efs-legacy", mounts.get("efs-utils-config-legacy").getMountPath());
  }
}
