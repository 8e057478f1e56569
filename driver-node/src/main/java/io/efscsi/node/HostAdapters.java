package io.efscsi.node;

import io.efscsi.node.iam.SdkCredentialsProviders;
import io.efscsi.node.k8s.InClusterClient;
import io.efscsi.node.volume.AwsMountTargetLookup;
import io.efscsi.node.volume.HostResolver;
import io.efscsi.node.volume.InetAddressHostResolver;
import io.efscsi.supervisor.ProxySupervisor;
import io.efscsi.supervisor.Supervisors;
import io.efscsi.supervisor.host.CommandMounter;
import io.efscsi.supervisor.host.MountTable;
import io.efscsi.supervisor.host.Mounter;
import io.efscsi.supervisor.host.ProcMountTable;
import io.efscsi.supervisor.host.Unmounter;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.Function;

/**
 * This host's real adapters for the node side, made here only: {@link NodePlugin} makes each of the
 * node's once and passes them on, and so does {@link NodePlugin#directoryCleanup} for the
 * controller's cleanup mounts. Every other class receives its collaborators.
 */
final class HostAdapters {

  private static final Duration MOUNT_TIMEOUT = Duration.ofSeconds(90);

  private HostAdapters() {}

  /** The NFS mount command ({@code --nfs-mount-command}) and umount, bounded. */
  static Mounter mounter(NodeOptions options) {
    return new CommandMounter(options.nfsMountCommand(), MOUNT_TIMEOUT, options.unmountTimeout());
  }

  /** This process's mount table. */
  static MountTable mountTable() {
    return mountTable(ProcMountTable.SELF);
  }

  /** The mount table in {@code file} ({@code /proc/self/mountinfo}, or another process's). */
  static MountTable mountTable(java.nio.file.Path file) {
    return new ProcMountTable(file);
  }

  /** DNS with a deadline. */
  static HostResolver hosts() {
    return new InetAddressHostResolver(InetAddressHostResolver.DEFAULT_TIMEOUT);
  }

  /** EFS and EC2 lookups; their SDK clients are made at the first lookup. */
  static AwsMountTargetLookup mountTargetLookup() {
    return new AwsMountTargetLookup();
  }

  /** A region's IAM credentials (the SDK's providers made at the first use of each source). */
  static Function<String, SdkCredentialsProviders> credentials() {
    return SdkCredentialsProviders::new;
  }

  /** The Kubernetes client, made at its first use, inside a cluster only. */
  static InClusterClient kubernetes(Map<String, String> env) {
    return new InClusterClient(env, () -> new KubernetesClientBuilder().build());
  }

  /** A supervisor (not started yet) on this host's processes, cgroups and ports. */
  static ProxySupervisor supervisor(
      SupervisorOptions o, Unmounter unmounter, ProxySupervisor.Listener listener)
      throws IOException {
    return Supervisors.onThisHost(o.config(), o.cgroups(), home(), unmounter, listener);
  }

  /** The distribution root: {@code efscsi.home} (set by bin/efs-csi), else from our jar's place. */
  static Path home() throws IOException {
    String prop = System.getProperty("efscsi.home");
    if (prop != null && !prop.isBlank()) {
      return Path.of(prop);
    }
    try {
      Path jar =
          Path.of(HostAdapters.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      if (jar.getParent() != null && jar.getParent().getFileName().toString().equals("lib")) {
        return jar.getParent().getParent();
      }
    } catch (URISyntaxException | SecurityException e) {
      // fall through
    }
    throw new IOException(
        "cannot find the distribution (lib/proxy): set -Defscsi.home or run bin/efs-csi");
  }
}
