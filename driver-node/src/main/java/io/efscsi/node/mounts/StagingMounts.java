package io.efscsi.node.mounts;

import io.efscsi.common.error.DriverException;
import io.efscsi.node.iam.ClientCertificateSource;
import io.efscsi.node.volume.MountPlan;
import io.efscsi.proxy.config.ProxyConfig.BindProtocol;
import io.efscsi.supervisor.ProxySpec;
import io.efscsi.supervisor.ProxyStartException;
import io.efscsi.supervisor.ProxySupervisor;
import io.efscsi.supervisor.host.MountInfo;
import io.efscsi.supervisor.host.MountPoints;
import io.efscsi.supervisor.host.Mounter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NodeStage and NodeUnstage: one NFS mount per volume at the staging path, through the mount key's
 * proxy (shared by every volume with the same key). A stage returns only once the mount is in the
 * mount table; an unstage only once it is gone from it.
 */
public final class StagingMounts {

  private static final Logger LOG = LoggerFactory.getLogger(StagingMounts.class);

  private final Supplier<ProxySupervisor> supervisors;
  private final Mounter mounter;
  private final MountPoints mounts;
  private final ClientCertificateSource certificates;
  private final Duration unmountWait;
  private volatile java.util.function.BiConsumer<String, String> failures = (v, why) -> {};

  public StagingMounts(
      Supplier<ProxySupervisor> supervisors,
      Mounter mounter,
      MountPoints mounts,
      ClientCertificateSource certificates,
      Duration unmountWait) {
    this.supervisors = supervisors;
    this.mounter = mounter;
    this.mounts = mounts;
    this.certificates = certificates;
    this.unmountWait = unmountWait;
  }

  /** Told of every failed stage: the volume id and why (an event on the Node). */
  public void onStageFailure(java.util.function.BiConsumer<String, String> listener) {
    this.failures = listener;
  }

  /** Stages a volume; a repeated identical call is a success. */
  public void stage(String volumeId, Path stagingPath, MountPlan plan) throws IOException {
    try {
      stageOnce(volumeId, stagingPath, plan);
    } catch (IOException | RuntimeException e) {
      try {
        failures.accept(volumeId, String.valueOf(e.getMessage()));
      } catch (RuntimeException ignored) {
        // only informs
      }
      throw e;
    }
  }

  private void stageOnce(String volumeId, Path stagingPath, MountPlan plan) throws IOException {
    String user = stagingPath.normalize().toString();
    Optional<MountInfo> existing = mounts.at(stagingPath);
    Optional<ProxySupervisor.Lease> lease = supervisors.get().leaseOf(user);
    if (existing.isPresent()) {
      if (lease.isPresent() && lease.get().key().equals(plan.proxyKey())) {
        LOG.info(
            "volume {} is already staged at {} (port {})",
            volumeId,
            stagingPath,
            lease.get().port());
        return;
      }
      throw DriverException.alreadyExists(
          "staging path %s already has a mount (%s %s)%s; unstage it first",
          stagingPath,
          existing.get().fsType(),
          existing.get().source(),
          lease.isPresent()
              ? " of a volume with other mount options"
              : " that this node did not make");
    }
    if (lease.isPresent() && !lease.get().key().equals(plan.proxyKey())) {
      supervisors.get().releaseUser(user); // an earlier stage of other options failed half-way
    }
    ProxySupervisor.Lease l;
    try {
      l = supervisors.get().ensure(plan.proxyKey(), proxySpec(plan), user);
    } catch (ProxyStartException e) {
      throw switch (e.reason()) {
        case CONFIG -> DriverException.invalidArgument("volume %s: %s", volumeId, e.getMessage());
        default -> DriverException.unavailable("volume %s: %s", volumeId, e.getMessage());
      };
    }
    try {
      Files.createDirectories(stagingPath);
      List<String> options = new ArrayList<>(plan.nfsOptions());
      options.add("port=" + l.port());
      mounter.mountNfs("127.0.0.1:" + plan.exportPath(), stagingPath, options);
      if (!mounts.isMounted(stagingPath)) {
        throw new IOException(
            "the mount command succeeded but " + stagingPath + " is not in the mount table");
      }
      LOG.info("volume {} staged at {} through 127.0.0.1:{}", volumeId, stagingPath, l.port());
    } catch (IOException | RuntimeException e) {
      releaseQuietly(user);
      throw DriverException.internal(
          "volume "
              + volumeId
              + ": mounting "
              + plan.exportPath()
              + " of "
              + plan.fileSystemId()
              + " at "
              + stagingPath
              + " failed: "
              + e.getMessage(),
          e);
    }
  }

  /** Unstages a volume; a repeated call, or one for a path never staged, is a success. */
  public void unstage(String volumeId, Path stagingPath) throws IOException {
    String user = stagingPath.normalize().toString();
    if (mounts.isMounted(stagingPath)) {
      long below = mounts.countAtOrBelow(stagingPath);
      if (below > 1) {
        LOG.warn(
            "volume {}: {} has {} mounts below it; unmounting the staging mount anyway",
            volumeId,
            stagingPath,
            below - 1);
      }
      Unmounts.unmount(mounter, mounts, stagingPath, unmountWait);
    }
    ProxySupervisor sup = supervisors.get();
    Optional<ProxySupervisor.Lease> lease = sup.leaseOf(user);
    sup.releaseUser(user);
    if (lease.isPresent() && sup.status(lease.get().key()).isEmpty()) {
      certificates.forget(lease.get().key(), sup.certificateDir());
    }
    LOG.info("volume {} unstaged from {}", volumeId, stagingPath);
  }

  private void releaseQuietly(String user) {
    try {
      supervisors.get().releaseUser(user);
    } catch (IOException e) {
      LOG.warn("could not release the proxy of {}: {}", user, e.getMessage());
    }
  }

  /** What the plan's proxy forwards to (port and control socket are the supervisor's). */
  ProxySpec proxySpec(MountPlan plan) throws IOException {
    Optional<ProxySpec.ClientCertificate> certificate = Optional.empty();
    if (plan.tls()) {
      Path dir = supervisors.get().certificateDir();
      certificate =
          certificates
              .forPlan(plan, dir)
              .map(c -> new ProxySpec.ClientCertificate(c.certificate(), c.privateKey()));
    }
    return new ProxySpec(
        plan.upstreamHost(),
        plan.upstreamPort(),
        plan.tls(),
        plan.serverName(),
        plan.verifyHostname(),
        plan.caFile(),
        certificate,
        BindProtocol.AWSFILE_V3);
  }
}
