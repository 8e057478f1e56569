package io.efscsi.node.cleanup;

import io.efscsi.common.error.DriverException;
import io.efscsi.node.cloud.FixedNodeMetadata;
import io.efscsi.node.iam.ClientCertificateSource;
import io.efscsi.node.iam.IssuedCertificates;
import io.efscsi.node.iam.SdkCredentialsProviders;
import io.efscsi.node.mounts.StagingMounts;
import io.efscsi.node.volume.HostResolver;
import io.efscsi.node.volume.MountDefaults;
import io.efscsi.node.volume.MountPlan;
import io.efscsi.node.volume.MountPlanner;
import io.efscsi.node.volume.MountTargetLookup;
import io.efscsi.node.volume.MountTargetResolver;
import io.efscsi.supervisor.ProxySupervisor;
import io.efscsi.supervisor.host.Commands;
import io.efscsi.supervisor.host.MountPoints;
import io.efscsi.supervisor.host.Mounter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller's {@code --delete-access-point-root-dir} and {@code onDelete}, on the node's own
 * mount path: the file system's root is staged exactly like a volume (a proxy from a mount
 * supervisor, TLS with an IAM client certificate, the NFS mount command with our defaults) at
 * {@code <state-dir>/controller/mnt/<access point>}, the directory is removed or renamed by child
 * processes ({@code rm -rf --one-file-system}, {@code mv -n}, so a hung NFS server never hangs the
 * controller, and no symbolic link is followed), and the mount and proxy go away again. The
 * supervisor has its own state dir ({@code <state-dir>/controller}), so in the one-process {@code
 * all} mode it never touches the node's proxies.
 */
public final class DirectoryCleanup implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(DirectoryCleanup.class);

  private static final Duration UNMOUNT_WAIT = Duration.ofSeconds(10);
  private static final Duration CHECK_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration REMOVE_TIMEOUT = Duration.ofHours(2);

  /** The archived name's prefix (the controller's DirectoryRemover.ARCHIVE_PREFIX). */
  static final String ARCHIVE_PREFIX = "archived-";

  /** How many archives of one name there may be: {@code archived-<name>} and -2 to this. */
  static final int MAX_ARCHIVES = 1000;

  /** Makes the cleanup mounts' supervisor on their own state dir (this host's, in production). */
  @FunctionalInterface
  public interface SupervisorFactory {
    ProxySupervisor create() throws IOException;
  }

  private final Path stateDir;
  private final MountDefaults mountDefaults;
  private final int mountTargetPort;
  private final Mounter mounter;
  private final MountPoints mounts;
  private final HostResolver hosts;
  private final Function<String, SdkCredentialsProviders> credentialsOf;
  private final SupervisorFactory supervisors;
  private final Map<String, ClientCertificateSource> certificates = new ConcurrentHashMap<>();
  private final Map<String, SdkCredentialsProviders> credentials = new ConcurrentHashMap<>();
  private ProxySupervisor supervisor;

  /**
   * @param stateDir its own state dir ({@code <state-dir>/controller}): the supervisor's, and the
   *     mount points below it
   * @param mountDefaults the NFS options every mount starts from
   * @param mountTargetPort the mount targets' NFS port
   * @param mounter mounts and unmounts
   * @param mounts the mount table
   * @param hosts resolves the mount target's name (no EFS or EC2 lookups: its address is given)
   * @param credentials the IAM credentials of a region, asked at its first cleanup, closed here
   * @param supervisors makes the supervisor, at the first cleanup; it is closed here
   */
  public DirectoryCleanup(
      Path stateDir,
      MountDefaults mountDefaults,
      int mountTargetPort,
      Mounter mounter,
      MountPoints mounts,
      HostResolver hosts,
      Function<String, SdkCredentialsProviders> credentials,
      SupervisorFactory supervisors) {
    this.stateDir = stateDir;
    this.mountDefaults = mountDefaults;
    this.mountTargetPort = mountTargetPort;
    this.mounter = mounter;
    this.mounts = mounts;
    this.hosts = hosts;
    this.credentialsOf = credentials;
    this.supervisors = supervisors;
  }

  /** What is done with the directory once the file system is mounted at {@code mnt}. */
  @FunctionalInterface
  private interface OnMount<T> {
    T apply(Path mnt, String path) throws IOException;
  }

  /**
   * Removes {@code path} of the file system and everything below it.
   *
   * @param region the file system's region (DNS name, certificate signature)
   * @param mountTargetIp the mount target to go through
   * @param accessPointId names the temporary mount point
   * @param path absolute, clean, not {@code /} (checked again here)
   * @return false when the directory did not exist
   */
  public boolean remove(
      String region, String fileSystemId, String mountTargetIp, String accessPointId, String path) {
    return onMount(
        "remove",
        region,
        fileSystemId,
        mountTargetIp,
        accessPointId,
        path,
        DirectoryCleanup::removeBelow);
  }

  /**
   * Renames {@code path} to {@code archived-<name>} in the same parent directory, or the first free
   * {@code archived-<name>-<n>} (n from 2) when that is taken; nothing is ever replaced.
   *
   * @return the archived path, empty when the directory did not exist
   */
  public Optional<String> archive(
      String region, String fileSystemId, String mountTargetIp, String accessPointId, String path) {
    return onMount(
        "archive",
        region,
        fileSystemId,
        mountTargetIp,
        accessPointId,
        path,
        DirectoryCleanup::archiveBelow);
  }

  private <T> T onMount(
      String verb,
      String region,
      String fileSystemId,
      String mountTargetIp,
      String accessPointId,
      String path,
      OnMount<T> action) {
    if (!path.startsWith("/")
        || path.equals("/")
        || !Path.of(path).normalize().toString().equals(path)
        || !accessPointId.matches("fsap-[0-9a-f]+")) {
      throw DriverException.invalidArgument(
          "refusing to %s '%s' of access point '%s': not a clean path below /",
          verb, path, accessPointId);
    }
    Path mnt;
    MountPlan plan;
    StagingMounts staging;
    try {
      ProxySupervisor sup = supervisor();
      Path dir = Files.createDirectories(stateDir.resolve("mnt").resolve(accessPointId));
      mnt = dir.toRealPath();
      plan = plan(region, fileSystemId, mountTargetIp);
      staging = new StagingMounts(() -> sup, mounter, mounts, certificates(region), UNMOUNT_WAIT);
    } catch (IOException e) {
      throw DriverException.unavailable(
          "cannot prepare the mount to %s %s of %s: %s", verb, path, fileSystemId, e.getMessage());
    }
    String what = fileSystemId + " (root directory of " + accessPointId + ")";
    try {
      staging.stage(what, mnt, plan);
      return action.apply(mnt, path);
    } catch (IOException e) {
      throw DriverException.internal(
          "failed to " + verb + " " + path + " of " + fileSystemId + ": " + e.getMessage(), e);
    } finally {
      try {
        staging.unstage(what, mnt);
        if (!mounts.isMounted(mnt)) {
          Files.deleteIfExists(mnt);
        }
      } catch (IOException | RuntimeException e) {
        LOG.warn("could not unmount {} after {} {}: {}", mnt, verb, path, e.getMessage());
      }
    }
  }

  /**
   * Removes {@code mnt + path}; its real path must be exactly that (no symbolic link on the way).
   */
  static boolean removeBelow(Path mnt, String path) throws IOException {
    if (!existsExactly(mnt, path, "removing")) {
      return false;
    }
    String target = mnt + path;
    Commands.Result rm =
        Commands.run(List.of("rm", "-rf", "--one-file-system", "--", target), REMOVE_TIMEOUT);
    if (!rm.ok()) {
      throw new IOException("rm -rf " + path + " failed: " + rm.output().strip());
    }
    LOG.info("removed {} (through {})", path, mnt);
    return true;
  }

  /**
   * Renames {@code mnt + path} to the first free archive name beside it; its real path must be
   * exactly that (no symbolic link on the way). A name is free when nothing, not even a dangling
   * symbolic link, has it; {@code mv -n} never replaces one that appears in between.
   *
   * @return the archived path (inside the file system), empty when the directory did not exist
   */
  static Optional<String> archiveBelow(Path mnt, String path) throws IOException {
    if (!existsExactly(mnt, path, "archiving")) {
      return Optional.empty();
    }
    Path p = Path.of(path);
    String parent = p.getParent().toString().equals("/") ? "" : p.getParent().toString();
    String base = parent + "/" + ARCHIVE_PREFIX + p.getFileName();
    for (int n = 1; n <= MAX_ARCHIVES; n++) {
      String to = n == 1 ? base : base + "-" + n;
      if (lexists(mnt + to)) {
        continue;
      }
      Commands.Result mv =
          Commands.run(List.of("mv", "-T", "-n", "--", mnt + path, mnt + to), CHECK_TIMEOUT);
      if (!lexists(mnt + path)) {
        LOG.info("archived {} as {} (through {})", path, to, mnt);
        return Optional.of(to);
      }
      if (!lexists(mnt + to)) {
        throw new IOException("mv " + path + " " + to + " failed: " + mv.output().strip());
      }
    }
    throw DriverException.failedPrecondition(
        "not archiving %s: %s and %s-2 to -%s are all taken", path, base, base, MAX_ARCHIVES);
  }

  /** Whether {@code mnt + path} exists and its real path is exactly that. */
  private static boolean existsExactly(Path mnt, String path, String doing) throws IOException {
    String target = mnt + path;
    Commands.Result real = Commands.run(List.of("realpath", "-e", "--", target), CHECK_TIMEOUT);
    if (!real.ok()) {
      if (real.output().contains("No such file or directory")) {
        return false;
      }
      throw new IOException("cannot resolve " + path + ": " + real.output().strip());
    }
    if (!real.output().strip().equals(target)) {
      throw DriverException.failedPrecondition(
          "not %s %s: a symbolic link on its way leads to %s", doing, path, real.output().strip());
    }
    return true;
  }

  /** Whether anything has this name (lstat: a dangling symbolic link counts), in a child. */
  private static boolean lexists(String file) throws IOException {
    Commands.Result stat = Commands.run(List.of("stat", "-c", "%F", "--", file), CHECK_TIMEOUT);
    if (stat.ok()) {
      return true;
    }
    if (stat.output().contains("No such file or directory")) {
      return false;
    }
    throw new IOException("cannot stat " + file + ": " + stat.output().strip());
  }

  private MountPlan plan(String region, String fileSystemId, String mountTargetIp) {
    MountPlanner planner =
        new MountPlanner(
            mountDefaults,
            new FixedNodeMetadata(
                IssuedCertificates.commonName(), region, Optional.empty(), "controller"),
            new MountTargetResolver(hosts, NO_LOOKUP),
            mountTargetPort);
    return planner.plan(
        fileSystemId, Map.of("mounttargetip", mountTargetIp), List.of("tls", "iam"), false);
  }

  /** The mount target is always given: no EFS/EC2 lookups from here. */
  private static final MountTargetLookup NO_LOOKUP =
      new MountTargetLookup() {
        @Override
        public List<MountTargetDescription> mountTargets(String region, String fileSystemId) {
          throw DriverException.failedPrecondition("no mount target lookup for cleanup mounts");
        }

        @Override
        public Optional<String> availabilityZoneId(String region, String zone) {
          return Optional.empty();
        }
      };

  private ClientCertificateSource certificates(String region) {
    return certificates.computeIfAbsent(
        region,
        r ->
            IssuedCertificates.unrenewed(
                credentials.computeIfAbsent(r, credentialsOf), r, InstantSource.system()));
  }

  /**
   * The cleanup mounts' supervisor, started (adopting what a previous controller left) at first
   * use.
   */
  private synchronized ProxySupervisor supervisor() throws IOException {
    if (supervisor == null) {
      ProxySupervisor s = supervisors.create();
      s.start();
      supervisor = s;
    }
    return supervisor;
  }

  @Override
  public synchronized void close() {
    if (supervisor != null) {
      supervisor.close();
    }
    credentials.values().forEach(SdkCredentialsProviders::close);
  }
}
