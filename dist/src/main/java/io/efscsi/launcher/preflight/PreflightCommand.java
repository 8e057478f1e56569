package io.efscsi.launcher.preflight;

import io.efscsi.node.takeover.EfsUtilsDirs;
import io.efscsi.supervisor.host.ProcMountTable;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code efs-csi preflight}: before switching from the Go driver, what this driver will do with
 * what the cluster and its nodes hold.
 *
 * <ul>
 *   <li>{@code efs-csi preflight [--kubeconfig FILE] [--region R]}, where the cluster can be read
 *       (two list calls: StorageClasses, PersistentVolumes): each StorageClass of {@code
 *       efs.csi.aws.com} read as CreateVolume reads it, each PersistentVolume as NodeStageVolume
 *       reads it ({@code --region}: the nodes' region, for handles that name a DNS name; default
 *       {@code $AWS_REGION}, else us-east-1).
 *   <li>{@code efs-csi preflight node [--host-root DIR] [--mountinfo FILE] [--efs-utils-state-dir
 *       DIR] [--efs-utils-config-dir-path DIR] [--efs-utils-config-legacy-dir-path DIR]} on a node,
 *       e.g. in {@code kubectl debug node/<node> --image=<our image> -- efs-csi preflight node}
 *       (the host's root at {@code /host}, its pid namespace): each of the Go driver's mounts as
 *       the takeover will take it.
 * </ul>
 *
 * Prints a table (KIND, NAME, VERDICT, WHY). Exit codes: 0 nothing would break, 1 something would
 * (a {@code refuse} row), 2 bad flags, 3 the cluster or the node could not be read.
 */
public final class PreflightCommand {

  private PreflightCommand() {}

  public static int run(
      List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
    boolean node = !args.isEmpty() && args.get(0).equals("node");
    List<String> rest = node ? args.subList(1, args.size()) : args;
    Map<String, String> flags;
    try {
      flags =
          flags(
              rest,
              node
                  ? List.of(
                      "--host-root",
                      "--mountinfo",
                      "--efs-utils-state-dir",
                      "--efs-utils-config-dir-path",
                      "--efs-utils-config-legacy-dir-path")
                  : List.of("--kubeconfig", "--region"));
    } catch (IllegalArgumentException e) {
      err.println("efs-csi preflight" + (node ? " node" : "") + ": " + e.getMessage());
      return 2;
    }
    PreflightTable table = new PreflightTable();
    try {
      if (node) {
        Path root = Path.of(flags.getOrDefault("--host-root", "/host"));
        EfsUtilsDirs dirs =
            new EfsUtilsDirs(
                dir(flags, "--efs-utils-state-dir", root, "var/run/efs"),
                dir(flags, "--efs-utils-config-dir-path", root, "var/amazon/efs"),
                dir(flags, "--efs-utils-config-legacy-dir-path", root, "etc/amazon/efs"));
        Path mountinfo = Path.of(flags.getOrDefault("--mountinfo", "/proc/1/mountinfo"));
        NodePreflight.check(new ProcMountTable(mountinfo).read(), dirs, table);
      } else {
        String region =
            flags.getOrDefault(
                "--region",
                env.getOrDefault(
                    "AWS_REGION", env.getOrDefault("AWS_DEFAULT_REGION", "us-east-1")));
        try (KubernetesObjects k =
            new KubernetesObjects(Optional.ofNullable(flags.get("--kubeconfig")).map(Path::of))) {
          ClusterPreflight.check(k.storageClasses(), k.volumes(), region, table);
        }
      }
    } catch (Exception e) {
      err.println(
          "efs-csi preflight"
              + (node ? " node" : "")
              + ": cannot read the "
              + (node ? "node's mounts or efs-utils' files" : "cluster")
              + ": "
              + e);
      return 3;
    }
    table.print(out);
    return table.exitCode();
  }

  private static Path dir(Map<String, String> flags, String flag, Path root, String under) {
    String v = flags.get(flag);
    return v != null ? Path.of(v) : root.resolve(under);
  }

  /** {@code --flag value} or {@code --flag=value}, each at most once, from the known ones. */
  static Map<String, String> flags(List<String> args, List<String> known) {
    Map<String, String> out = new LinkedHashMap<>();
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      int eq = a.indexOf('=');
      String flag = eq > 0 ? a.substring(0, eq) : a;
      if (!known.contains(flag)) {
        throw new IllegalArgumentException(
            "unknown argument '" + a + "'; accepted: " + String.join(", ", known));
      }
      String value;
      if (eq > 0) {
        value = a.substring(eq + 1);
      } else if (i + 1 < args.size()) {
        value = args.get(++i);
      } else {
        throw new IllegalArgumentException("flag " + flag + " needs a value");
      }
      if (value.isBlank()) {
        throw new IllegalArgumentException("flag " + flag + " has an empty value");
      }
      if (out.putIfAbsent(flag, value) != null) {
        throw new IllegalArgumentException("flag " + flag + " is given twice");
      }
    }
    return out;
  }
}
