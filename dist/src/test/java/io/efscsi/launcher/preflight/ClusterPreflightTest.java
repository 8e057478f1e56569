package io.efscsi.launcher.preflight;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.launcher.preflight.ClusterPreflight.StorageClassView;
import io.efscsi.launcher.preflight.ClusterPreflight.VolumeView;
import io.efscsi.launcher.preflight.PreflightTable.Row;
import io.efscsi.launcher.preflight.PreflightTable.Verdict;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The cluster half of the pre-flight check: one object of each kind, read with the controller's and
 * the node's own parsers, so a refusal is the error the driver would answer.
 */
class ClusterPreflightTest {

  static StorageClassView sc(String name, Map<String, String> params, List<String> options) {
    return new StorageClassView(name, "efs.csi.aws.com", params, options);
  }

  static VolumeView pv(String name, String handle, Map<String, String> attrs, List<String> opts) {
    return new VolumeView(name, "efs.csi.aws.com", handle, attrs, opts);
  }

  static Map<String, String> dynamic(String extraKey, String extraValue) {
    return Map.of(
        "provisioningMode",
        "efs-ap",
        "fileSystemId",
        "fs-12345678",
        "directoryPerms",
        "700",
        "csi.storage.k8s.io/provisioner-secret-name",
        "x",
        extraKey,
        extraValue);
  }

  List<Row> check(List<StorageClassView> classes, List<VolumeView> volumes, String region) {
    PreflightTable t = new PreflightTable();
    ClusterPreflight.check(classes, volumes, region, t);
    return t.rows();
  }

  @Test
  void eachObjectIsReadAsTheDriverReadsIt() {
    List<Row> rows =
        check(
            List.of(
                sc("efs-sc", dynamic("basePath", "/dynamic"), List.of("tls")),
                sc("bad-perms", dynamic("gidRangeStart", "abc"), List.of()),
                sc("bad-on-delete", dynamic("onDelete", "shred"), List.of()),
                new StorageClassView("gp3", "ebs.csi.aws.com", Map.of("type", "gp3"), List.of())),
            List.of(
                pv("static", "fs-12345678", Map.of(), List.of("tls")),
                pv("ap", "fs-12345678::fsap-0123456789abcdef0", Map.of(), List.of("tls", "iam")),
                pv("dns", "fs-12345678.efs.eu-west-1.amazonaws.com", Map.of(), List.of()),
                pv("bad-handle", "fs-12345678:sub:dir:fsap-1:extra", Map.of(), List.of()),
                pv("bad-ip", "fs-12345678", Map.of("mounttargetip", "300.1.1.1"), List.of()),
                new VolumeView("ebs", "ebs.csi.aws.com", "vol-1", Map.of(), List.of())),
            "us-east-1");
    assertEquals(
        List.of(
            "StorageClass efs-sc OK",
            "StorageClass bad-perms REFUSE",
            "StorageClass bad-on-delete REFUSE",
            "PersistentVolume static OK",
            "PersistentVolume ap OK",
            "PersistentVolume dns REFUSE",
            "PersistentVolume bad-handle REFUSE",
            "PersistentVolume bad-ip REFUSE"),
        rows.stream().map(r -> r.kind() + " " + r.name() + " " + r.verdict()).toList(),
        rows::toString);
    assertTrue(rows.get(1).why().contains("gidRangeStart"), rows.get(1)::why);
    assertTrue(rows.get(2).why().contains("'shred'"), rows.get(2)::why);
    assertEquals(
        "mounts fs-12345678 through fsap-0123456789abcdef0 with TLS and IAM", rows.get(4).why());
    assertTrue(rows.get(5).why().contains("eu-west-1"), rows.get(5)::why);
    assertTrue(rows.get(7).why().contains("300.1.1.1"), rows.get(7)::why);

    // the same DNS-name handle is served on nodes of its own region
    assertEquals(
        Verdict.OK,
        check(
                List.of(),
                List.of(pv("dns", "fs-12345678.efs.eu-west-1.amazonaws.com", Map.of(), List.of())),
                "eu-west-1")
            .get(0)
            .verdict());
  }

  @Test
  void theTablePrintsAlignedAndExitsOneOnARefusal() {
    PreflightTable t = new PreflightTable();
    t.add(new Row("StorageClass", "efs-sc", Verdict.OK, "fine"));
    t.add(new Row("mount", "/m (port 20049)", Verdict.TAKE_OVER, "taken"));
    assertEquals(0, t.exitCode());
    t.add(new Row("PersistentVolume", "pv", Verdict.REFUSE, "broken"));
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    t.print(new PrintStream(b, true, StandardCharsets.UTF_8));
    assertEquals(
        """
        KIND              NAME             VERDICT    WHY
        StorageClass      efs-sc           ok         fine
        mount             /m (port 20049)  take-over  taken
        PersistentVolume  pv               refuse     broken
        1 ok, 1 take-over, 0 leave, 1 refuse: fix the refused ones before switching (exit 1)
        """,
        b.toString(StandardCharsets.UTF_8));
    assertEquals(1, t.exitCode());
  }

  @Test
  void badFlagsAreRefusedWithExitTwo() {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);
    assertEquals(2, PreflightCommand.run(List.of("--nope"), Map.of(), System.out, e));
    assertEquals(
        2, PreflightCommand.run(List.of("node", "--kubeconfig", "x"), Map.of(), System.out, e));
    assertEquals(2, PreflightCommand.run(List.of("--region"), Map.of(), System.out, e));
    assertEquals(
        """
        efs-csi preflight: unknown argument '--nope'; accepted: --kubeconfig, --region
        efs-csi preflight node: unknown argument '--kubeconfig'; accepted: --host-root, \
        --mountinfo, --efs-utils-state-dir, --efs-utils-config-dir-path, \
        --efs-utils-config-legacy-dir-path
        efs-csi preflight: flag --region needs a value
        """,
        err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void anUnreadableClusterIsExitThree() throws Exception {
    java.nio.file.Path missing = java.nio.file.Files.createTempDirectory("pf").resolve("none");
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    assertEquals(
        3,
        PreflightCommand.run(
            List.of("--kubeconfig", missing.toString()),
            Map.of(),
            System.out,
            new PrintStream(err, true, StandardCharsets.UTF_8)));
    assertTrue(
        err.toString().startsWith("efs-csi preflight: cannot read the cluster: "), err::toString);
  }
}
