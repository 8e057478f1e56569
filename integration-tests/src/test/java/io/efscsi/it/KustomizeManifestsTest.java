package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.marcnuri.helm.Helm;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * deploy/kustomize/base is the Helm chart rendered with its defaults (the CSIDriver as a plain
 * object, not a hook), one file per template, for {@code kubectl apply -k}. It is rendered as the
 * release {@code kustomize}, as upstream renders its deploy/kubernetes/base, so the immutable
 * selectors ({@code app.kubernetes.io/instance: kustomize}) are upstream's and {@code kubectl apply
 * -k} can replace an upstream kustomize install. This test renders the chart with helm itself and
 * fails when the committed files differ, so they cannot drift from the chart. Regenerate them with
 * {@code -Defscsi.kustomize.write=true} (see docs/install.md).
 */
class KustomizeManifestsTest {

  static final Path DIR = Path.of("../deploy/kustomize/base");

  /** The release name upstream's base was rendered with: its selectors carry it. */
  static final String RELEASE = "kustomize";

  static final String HEADER =
      "# Generated from deploy/helm/aws-efs-csi-driver with its default values by"
          + " KustomizeManifestsTest;\n# do not edit: change the chart and regenerate"
          + " (docs/install.md).\n";

  /** Labels that say Helm manages the object, which is not so when kubectl applies these. */
  private static final Pattern HELM_LABELS =
      Pattern.compile("(?m)^\\s+(helm\\.sh/chart: .*|app\\.kubernetes\\.io/managed-by: Helm)\\R");

  private static final Pattern SOURCE =
      Pattern.compile("(?m)^# Source: aws-efs-csi-driver/templates/(\\S+)$");

  /** File name to content, as the chart renders them now. */
  static Map<String, String> expected() {
    String rendered =
        new Helm(HelmChartTest.CHART)
            .template()
            .withName(RELEASE)
            .withNamespace("kube-system")
            .withKubeVersion("1.31.0")
            .set("useHelmHooksForCSIDriver", false)
            .call();
    Map<String, StringBuilder> files = new TreeMap<>();
    for (String doc : rendered.split("(?m)^---\\s*$")) {
      Matcher m = SOURCE.matcher(doc);
      if (!m.find() || doc.lines().noneMatch(l -> l.startsWith("kind:"))) {
        continue;
      }
      String body = HELM_LABELS.matcher(doc.substring(m.end())).replaceAll("").strip() + "\n";
      files
          .computeIfAbsent(m.group(1), k -> new StringBuilder(HEADER))
          .append("---\n")
          .append(body);
    }
    Map<String, String> out = new TreeMap<>();
    files.forEach((k, v) -> out.put(k, v.toString()));
    StringBuilder k = new StringBuilder(HEADER);
    k.append("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n")
        .append("namespace: kube-system\nresources:\n");
    files.keySet().forEach(f -> k.append("  - ").append(f).append('\n'));
    out.put("kustomization.yaml", k.toString());
    return out;
  }

  static Map<String, String> committed() throws IOException {
    Map<String, String> out = new TreeMap<>();
    if (!Files.isDirectory(DIR)) {
      return out;
    }
    try (Stream<Path> files = Files.list(DIR)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).toList()) {
        out.put(f.getFileName().toString(), Files.readString(f, StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  @Test
  void theCommittedManifestsAreTheChartRenderedWithItsDefaults() throws IOException {
    Map<String, String> expected = expected();
    if (Boolean.getBoolean("efscsi.kustomize.write")) {
      Files.createDirectories(DIR);
      for (String old : committed().keySet()) {
        Files.delete(DIR.resolve(old));
      }
      for (var e : expected.entrySet()) {
        Files.writeString(DIR.resolve(e.getKey()), e.getValue(), StandardCharsets.UTF_8);
      }
    }
    Map<String, String> committed = committed();
    assertEquals(
        expected.keySet(),
        committed.keySet(),
        "deploy/kustomize/base is out of date with the chart; regenerate it (docs/install.md)");
    for (var e : expected.entrySet()) {
      assertEquals(
          e.getValue(),
          committed.get(e.getKey()),
          "deploy/kustomize/base/" + e.getKey() + " differs from the chart; regenerate it");
    }
  }

  @Test
  void everyManifestIsAKubernetesObjectOfTheDriver() throws IOException {
    List<HasMetadata> all = new ArrayList<>();
    for (var e : committed().entrySet()) {
      if (e.getKey().equals("kustomization.yaml")) {
        continue;
      }
      for (String doc : e.getValue().split("(?m)^---\\s*$")) {
        if (doc.lines().anyMatch(l -> l.startsWith("kind:"))) {
          all.add(HelmChartTest.YAML.unmarshal(doc));
        }
      }
    }
    assertFalse(all.isEmpty());
    List<String> kinds = all.stream().map(HasMetadata::getKind).distinct().toList();
    for (String kind : List.of("CSIDriver", "DaemonSet", "Deployment", "ServiceAccount")) {
      assertTrue(kinds.contains(kind), kind + " in " + kinds);
    }
    assertEquals(
        "efs.csi.aws.com",
        all.stream()
            .filter(o -> o.getKind().equals("CSIDriver"))
            .findFirst()
            .orElseThrow()
            .getMetadata()
            .getName());
  }
}
