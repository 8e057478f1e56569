package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.csi.v1.NodeGrpc;
import io.efscsi.csi.v1.NodePublishVolumeRequest;
import io.efscsi.csi.v1.NodeStageVolumeRequest;
import io.efscsi.csi.v1.NodeUnpublishVolumeRequest;
import io.efscsi.csi.v1.NodeUnstageVolumeRequest;
import io.efscsi.csi.v1.VolumeCapability;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * kubelet after a node reboot: 20 volumes staged and 200 pods published, every call at once,
 * through the packaged node plugin (real supervisor and proxies in front of nfs-ganesha, real bind
 * mounts; the NFS mount command is the stand-in). A publish that arrives before its volume is
 * staged is refused and retried, as kubelet retries it. Then the same storm of unpublishes and
 * unstages.
 */
@Execution(ExecutionMode.CONCURRENT)
@ExtendWith(BesideTheCluster.class)
class NodeStormIT {

  static final int VOLUMES = 20;
  static final int PODS_PER_VOLUME = 10;

  NfsLab lab;
  Path tmp;
  PackagedDriver node;

  @BeforeEach
  void start() throws Exception {
    lab = new NfsLab(Files.createTempDirectory("efscsi-storm-lab"), 1);
    tmp = Files.createTempDirectory("efscsi-storm");
    node = NodePlugins.startPlugin(tmp, "storm", SupervisorIT.freeRange(VOLUMES + 8), lab.nfsPort);
  }

  @AfterEach
  void stop() throws Exception {
    if (node != null) {
      node.close();
    }
    Path proxies = tmp.resolve("state/proxies");
    if (Files.isDirectory(proxies)) {
      try (Stream<Path> records = Files.list(proxies)) {
        for (Path r : records.filter(p -> p.toString().endsWith(".json")).toList()) {
          long pid =
              Long.parseLong(Files.readString(r).replaceAll("(?s).*\"pid\": (\\d+).*", "$1"));
          ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
        }
      }
    }
    HostCleanup.deleteTree(tmp);
    lab.closeAndDelete();
  }

  static String volume(int v) {
    return String.format(Locale.ROOT, "fs-%08x", 0x5170_0000 + v);
  }

  Path staging(int v) {
    return NodeFacts.staging(tmp, v);
  }

  Path target(int v, int pod) {
    return NodeFacts.target(tmp, v, pod);
  }

  /** Runs every call at once (released together), each retried as kubelet retries; times in ns. */
  static long[] storm(List<Callable<Void>> calls) throws Exception {
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Long>> done = new ArrayList<>();
    try (ExecutorService pool = Executors.newVirtualThreadPerTaskExecutor()) {
      for (Callable<Void> call : calls) {
        done.add(
            pool.submit(() -> {
              go.await();
              long t0 = System.nanoTime();
              for (int attempt = 0; ; attempt++) {
                try {
                  call.call();
                  return System.nanoTime() - t0;
                } catch (StatusRuntimeException e) {
                  Status.Code c = e.getStatus().getCode();
                  boolean retryable =
                      c == Status.Code.FAILED_PRECONDITION // published before staged
                          || c == Status.Code.ABORTED // the volume is busy with another call
                          || c == Status.Code.UNAVAILABLE;
                  if (!retryable || attempt > 600) {
                    throw e;
                  }
                  Thread.sleep(100);
                }
              }
            }));
      }
      go.countDown();
      long[] nanos = new long[done.size()];
      for (int i = 0; i < nanos.length; i++) {
        nanos[i] = done.get(i).get(5, TimeUnit.MINUTES);
      }
      Arrays.sort(nanos);
      return nanos;
    }
  }

  static double ms(long[] sorted, int pct) {
    return sorted[Math.min(sorted.length - 1, sorted.length * pct / 100)] / 1e6;
  }

  @Test
  void twoHundredPublishesOfTwentyVolumesAtOnceGetOneProxyAndOneMountEach() throws Exception {
    NodeGrpc.NodeBlockingStub n = node.node();
    VolumeCapability cap =
        NodePlugins.mountCap(VolumeCapability.AccessMode.Mode.MULTI_NODE_MULTI_WRITER);
    List<Callable<Void>> up = new ArrayList<>();
    for (int v = 0; v < VOLUMES; v++) {
      String id = volume(v);
      Path staging = staging(v);
      Files.createDirectories(staging);
      up.add(() -> {
        n.nodeStageVolume(
            NodeStageVolumeRequest.newBuilder()
                .setVolumeId(id)
                .setStagingTargetPath(staging.toString())
                .setVolumeCapability(cap)
                .putAllVolumeContext(NodeIT.PLAIN_LOOPBACK)
                .build());
        return null;
      });
      for (int pod = 0; pod < PODS_PER_VOLUME; pod++) {
        Path target = target(v, pod);
        up.add(() -> {
          n.nodePublishVolume(
              NodePublishVolumeRequest.newBuilder()
                  .setVolumeId(id)
                  .setStagingTargetPath(staging.toString())
                  .setTargetPath(target.toString())
                  .setVolumeCapability(cap)
                  .build());
          return null;
        });
      }
    }
    long[] upTimes = storm(up);

    List<String> nfsMounts = Files.readAllLines(tmp.resolve("nfs-mounts.log"));
    assertEquals(VOLUMES, nfsMounts.size(), "one NFS mount per volume: " + nfsMounts);
    try (Stream<Path> records = Files.list(tmp.resolve("state/proxies"))) {
      assertEquals(
          VOLUMES,
          records.filter(p -> p.toString().endsWith(".json")).count(),
          "one proxy per volume");
    }
    assertEquals(
        VOLUMES + VOLUMES * PODS_PER_VOLUME,
        NodePlugins.mountsUnder(tmp).size(),
        "20 staging mounts and 200 bind mounts");
    for (int v = 0; v < VOLUMES; v++) {
      Files.writeString(target(v, 0).resolve("from-pod-0"), volume(v));
      assertEquals(
          volume(v), Files.readString(target(v, PODS_PER_VOLUME - 1).resolve("from-pod-0")));
    }

    List<Callable<Void>> down = new ArrayList<>();
    for (int v = 0; v < VOLUMES; v++) {
      String id = volume(v);
      Path staging = staging(v);
      for (int pod = 0; pod < PODS_PER_VOLUME; pod++) {
        Path target = target(v, pod);
        down.add(() -> {
          n.nodeUnpublishVolume(
              NodeUnpublishVolumeRequest.newBuilder()
                  .setVolumeId(id)
                  .setTargetPath(target.toString())
                  .build());
          return null;
        });
      }
    }
    long[] unpublishTimes = storm(down);
    List<Callable<Void>> unstage = new ArrayList<>();
    for (int v = 0; v < VOLUMES; v++) {
      String id = volume(v);
      Path staging = staging(v);
      unstage.add(() -> {
        n.nodeUnstageVolume(
            NodeUnstageVolumeRequest.newBuilder()
                .setVolumeId(id)
                .setStagingTargetPath(staging.toString())
                .build());
        return null;
      });
    }
    long[] unstageTimes = storm(unstage);

    assertEquals(List.of(), NodePlugins.mountsUnder(tmp), "no mount left");
    try (Stream<Path> records = Files.list(tmp.resolve("state/proxies"))) {
      assertTrue(records.noneMatch(p -> p.toString().endsWith(".json")), "no proxy record left");
    }
    System.out.printf(
        Locale.ROOT,
        "NodeStormIT: %d stages + %d publishes at once: p50 %.0f ms, p99 %.0f ms, max %.0f ms;"
            + " %d unpublishes at once: p50 %.0f ms, p99 %.0f ms; %d unstages: p99 %.0f ms;"
            + " %d proxies, %d NFS mounts, nothing left%n",
        VOLUMES,
        VOLUMES * PODS_PER_VOLUME,
        ms(upTimes, 50),
        ms(upTimes, 99),
        ms(upTimes, 100),
        unpublishTimes.length,
        ms(unpublishTimes, 50),
        ms(unpublishTimes, 99),
        unstageTimes.length,
        ms(unstageTimes, 99),
        VOLUMES,
        nfsMounts.size());
  }
}
