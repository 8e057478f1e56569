package io.efscsi.launcher.preflight;

import io.efscsi.common.error.DriverException;
import io.efscsi.controller.provision.ProvisioningParameters;
import io.efscsi.launcher.preflight.PreflightTable.Row;
import io.efscsi.launcher.preflight.PreflightTable.Verdict;
import io.efscsi.node.cloud.FixedNodeMetadata;
import io.efscsi.node.volume.HostResolver;
import io.efscsi.node.volume.MountDefaults;
import io.efscsi.node.volume.MountOptions;
import io.efscsi.node.volume.MountPlan;
import io.efscsi.node.volume.MountPlanner;
import io.efscsi.node.volume.MountTargetLookup;
import io.efscsi.node.volume.MountTargetResolver;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The cluster half of {@code efs-csi preflight}: every StorageClass this driver provisions for and
 * every PersistentVolume it serves, read as this driver's controller and node would read them (the
 * same parsers, so the same errors), before any pod meets them.
 */
public final class ClusterPreflight {

  public static final String DRIVER = "efs.csi.aws.com";

  /** The parts of a StorageClass the check reads. */
  public record StorageClassView(
      String name, String provisioner, Map<String, String> parameters, List<String> mountOptions) {}

  /** The parts of a PersistentVolume the check reads (its CSI source, when it has one). */
  public record VolumeView(
      String name,
      String driver,
      String volumeHandle,
      Map<String, String> attributes,
      List<String> mountOptions) {}

  private ClusterPreflight() {}

  /** One row per StorageClass and PersistentVolume of this driver; others are not listed. */
  public static void check(
      List<StorageClassView> classes,
      List<VolumeView> volumes,
      String region,
      PreflightTable table) {
    MountPlanner planner = offlinePlanner(region);
    for (StorageClassView sc : classes) {
      if (DRIVER.equals(sc.provisioner())) {
        table.add(storageClass(sc));
      }
    }
    for (VolumeView pv : volumes) {
      if (DRIVER.equals(pv.driver())) {
        table.add(volume(pv, planner));
      }
    }
  }

  static Row storageClass(StorageClassView sc) {
    Map<String, String> params = new HashMap<>(sc.parameters());
    // the external-provisioner takes its own keys (secrets, fsType) out before CreateVolume
    params.keySet().removeIf(k -> k.startsWith("csi.storage.k8s.io/"));
    try {
      ProvisioningParameters p = ProvisioningParameters.parse(params);
      MountOptions.parse(sc.mountOptions(), p.backend() == ProvisioningParameters.Backend.S3FILES);
    } catch (DriverException e) {
      return new Row("StorageClass", sc.name(), Verdict.REFUSE, e.getMessage());
    }
    return new Row(
        "StorageClass",
        sc.name(),
        Verdict.OK,
        "provisions with these parameters and mount options");
  }

  /**
   * The node's own planner (the same checks as NodeStageVolume, in the same order), with the mount
   * target left to the mount: every name "resolves", so nothing here needs the network or AWS.
   */
  static MountPlanner offlinePlanner(String region) {
    HostResolver anyName = host -> List.of(InetAddress.getLoopbackAddress());
    MountTargetLookup none =
        new MountTargetLookup() {
          @Override
          public List<MountTargetLookup.MountTargetDescription> mountTargets(
              String region, String fileSystemId) {
            return List.of();
          }

          @Override
          public Optional<String> availabilityZoneId(String region, String zone) {
            return Optional.empty();
          }
        };
    return new MountPlanner(
        MountDefaults.DEFAULT,
        new FixedNodeMetadata("preflight", region, Optional.empty(), "preflight"),
        new MountTargetResolver(anyName, none));
  }

  static Row volume(VolumeView pv, MountPlanner planner) {
    MountPlan plan;
    try {
      plan = planner.plan(pv.volumeHandle(), pv.attributes(), pv.mountOptions(), false);
    } catch (DriverException e) {
      return new Row("PersistentVolume", pv.name(), Verdict.REFUSE, e.getMessage());
    }
    return new Row(
        "PersistentVolume",
        pv.name(),
        Verdict.OK,
        "mounts "
            + plan.fileSystemId()
            + plan.accessPointId().map(ap -> " through " + ap).orElse("")
            + (plan.tls() ? " with TLS" : " without TLS")
            + (plan.iam() ? " and IAM" : ""));
  }
}
