package io.efscsi.node.metrics;

import static io.efscsi.node.metrics.VolumeMetricsTest.proxy;
import static io.efscsi.node.metrics.VolumeMetricsTest.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.node.mountstats.MountStatsSamples;
import io.efscsi.supervisor.ProxyStatus;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.BufferedReader;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Per-volume NFS client series: matched to volumes by the proxy port, counted once for a staging
 * mount and its bind mounts, labelled with the PV once a pod's mount shows it, bounded, and gone
 * with the mount.
 */
class NfsClientMetricsTest {

  static final String KEY = "fs-0123|fsap-4567|10.0.0.1:2049|tls";
  static final String STAGING =
      "/var/lib/kubelet/plugins/kubernetes.io/csi/efs.csi.aws.com/ab/globalmount";
  static final String POD = "/var/lib/kubelet/pods/uid-1/volumes/kubernetes.io~csi/pv-data/mount";

  final List<ProxyStatus> status = new ArrayList<>();
  String mountstats = "";
  final PrometheusMeterRegistry r = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  final NfsClientMetrics m =
      new NfsClientMetrics(
          new NfsClientMetrics.Source() {
            @Override
            public List<ProxyStatus> status() {
              return List.copyOf(status);
            }

            @Override
            public BufferedReader mountstats() {
              return new BufferedReader(new StringReader(mountstats));
            }
          },
          r);

  static String ops(long writes, long reads) {
    return "\t        NULL: 0 0 0 0 0 0 0 0 0\n"
        + "\t        READ: "
        + reads
        + " "
        + (reads + 1)
        + " 0 1000 2000 3 40 50 1\n"
        + "\t       WRITE: "
        + writes
        + " "
        + writes
        + " 2 4194304 640 10 300 330 0\n"
        + "\t    SEQUENCE: 7 7 0 0 0 0 7 8 0\n"
        + "\t RECLAIM_COMPLETE: 1 1 0 0 0 0 1 1 0\n";
  }

  @Test
  void aVolumesSeriesFollowItsMountAndCarryThePvOnceAPodShowsIt() {
    status.add(proxy(KEY, 20049, ProxyStatus.State.RUNNING, 0, 0));
    status.add(proxy("fs-9999|-|10.0.0.2:2049|tls", 20050, ProxyStatus.State.RUNNING, 0, 0));
    mountstats =
        MountStatsSamples.block(STAGING, 20049, ops(4, 0))
            + MountStatsSamples.block("/elsewhere", 30000, ops(99, 99)) // not one of ours
            + MountStatsSamples.block("/stale", 20051, ops(99, 99)); // no proxy on that port
    m.refresh();
    String v = "port=\"20049\",pv=\"\",volume=\"fs-0123::fsap-4567\"";
    assertEquals(4, value(r, "efs_csi_nfs_request_rtt_seconds_count{op=\"WRITE\"," + v + "}"));
    assertEquals(0.3, value(r, "efs_csi_nfs_request_rtt_seconds_sum{op=\"WRITE\"," + v + "}"));
    assertEquals(0.33, value(r, "efs_csi_nfs_request_execute_seconds_sum{op=\"WRITE\"," + v + "}"));
    assertEquals(0, value(r, "efs_csi_nfs_request_errors_total{op=\"WRITE\"," + v + "}"));
    // SEQUENCE and RECLAIM_COMPLETE are not listed: summed as OTHER
    assertEquals(8, value(r, "efs_csi_nfs_request_rtt_seconds_count{op=\"OTHER\"," + v + "}"));
    assertEquals(
        0.009, value(r, "efs_csi_nfs_request_execute_seconds_sum{op=\"OTHER\"," + v + "}"));
    assertTrue(
        Double.isNaN(value(r, "efs_csi_nfs_request_rtt_seconds_count{op=\"READ\"," + v + "}")),
        "no series for an operation the volume never asked for");
    assertEquals(6000, value(r, "efs_csi_nfs_write_bytes_total{" + v + "}"));
    assertEquals(5000, value(r, "efs_csi_nfs_read_bytes_total{" + v + "}"));
    assertEquals(2, value(r, "efs_csi_nfs_major_timeouts_total{" + v + "}"));
    assertEquals(
        1, value(r, "efs_csi_nfs_retransmissions_total{" + v + "}")); // READ: 0 ops, 1 sent
    assertEquals(3, value(r, "efs_csi_nfs_connects_total{" + v + "}"));
    assertFalse(r.scrape().contains("port=\"30000\""), "a mount through no proxy of ours");
    assertFalse(r.scrape().contains("port=\"20051\""), "a port no proxy serves now");
    assertFalse(r.scrape().contains("port=\"20050\""), "a proxy without a mount");

    // a pod's bind mount (the same superblock: the same numbers) names the PV
    mountstats =
        MountStatsSamples.block(STAGING, 20049, ops(6, 2))
            + MountStatsSamples.block(POD, 20049, ops(6, 2));
    m.refresh();
    String p = "port=\"20049\",pv=\"pv-data\",volume=\"fs-0123::fsap-4567\"";
    assertEquals(6, value(r, "efs_csi_nfs_request_rtt_seconds_count{op=\"WRITE\"," + p + "}"));
    assertEquals(2, value(r, "efs_csi_nfs_request_rtt_seconds_count{op=\"READ\"," + p + "}"));
    assertEquals(1, value(r, "efs_csi_nfs_request_errors_total{op=\"READ\"," + p + "}"));
    assertFalse(r.scrape().contains("pv=\"\""), "the series without the PV are replaced");

    // the pod goes, the PV is still known while the same proxy serves the mount
    mountstats = MountStatsSamples.block(STAGING, 20049, ops(7, 2));
    m.refresh();
    assertEquals(7, value(r, "efs_csi_nfs_request_rtt_seconds_count{op=\"WRITE\"," + p + "}"));

    mountstats = "";
    m.refresh();
    assertFalse(r.scrape().contains("efs_csi_nfs_"), "an unmounted volume's series are removed");
  }

  @Test
  void aRealKernelsFileGivesEachVolumeItsNumbersOnce() {
    status.add(proxy("fs-12345678|-|127.0.0.1:2049|tls", 20070, ProxyStatus.State.RUNNING, 0, 0));
    status.add(proxy("fs-12345678|-|127.0.0.2:2049|tls", 20071, ProxyStatus.State.RUNNING, 0, 0));
    mountstats = MountStatsSamples.sample("kernel-6.1.0-56.txt");
    m.refresh();
    String a = "port=\"20070\",pv=\"\",volume=\"fs-12345678\"";
    String b = "port=\"20071\",pv=\"pv-b\",volume=\"fs-12345678\"";
    assertEquals(312, value(r, "efs_csi_nfs_request_rtt_seconds_count{op=\"WRITE\"," + a + "}"));
    assertEquals(288, value(r, "efs_csi_nfs_request_rtt_seconds_count{op=\"WRITE\"," + b + "}"));
    assertEquals(
        465.855, value(r, "efs_csi_nfs_request_execute_seconds_sum{op=\"WRITE\"," + b + "}"));
    assertEquals(301989888, value(r, "efs_csi_nfs_write_bytes_total{" + b + "}"));
    assertEquals(0, value(r, "efs_csi_nfs_retransmissions_total{" + b + "}"));
    assertEquals(2, value(r, "efs_csi_nfs_connects_total{" + a + "}"));
  }

  @Test
  void aKernel510FileAfterAProxyKillShowsTheTimeoutsAndErrors() {
    status.add(proxy(KEY, 20049, ProxyStatus.State.RUNNING, 1, 0));
    mountstats = MountStatsSamples.sample("kernel-5.10.0-32.txt");
    m.refresh();
    String v = "port=\"20049\",pv=\"\",volume=\"fs-0123::fsap-4567\"";
    assertEquals(3, value(r, "efs_csi_nfs_major_timeouts_total{" + v + "}"));
    assertEquals(2, value(r, "efs_csi_nfs_request_errors_total{op=\"READ\"," + v + "}"));
    assertEquals(19, value(r, "efs_csi_nfs_connects_total{" + v + "}"));
    assertEquals(480, value(r, "efs_csi_nfs_request_rtt_seconds_count{op=\"READ\"," + v + "}"));
  }

  @Test
  void aKernelThatCountsNoErrorsGetsNoErrorSeries() {
    status.add(proxy(KEY, 20049, ProxyStatus.State.RUNNING, 0, 0));
    mountstats = MountStatsSamples.block(STAGING, 20049, "\t       WRITE: 1 1 0 2 3 4 5 6\n");
    m.refresh();
    assertTrue(r.scrape().contains("efs_csi_nfs_request_rtt_seconds_count{op=\"WRITE\""));
    assertFalse(r.scrape().contains("efs_csi_nfs_request_errors_total"));
  }

  @Test
  void everyOperationBeyondTheListIsOneOtherSeries() {
    status.add(proxy(KEY, 20049, ProxyStatus.State.RUNNING, 0, 0));
    StringBuilder ops = new StringBuilder();
    for (int i = 0; i < 100; i++) {
      ops.append("\tOP").append(i).append(": 1 1 0 0 0 0 1 1 0\n");
    }
    for (String op : NfsClientMetrics.OPS) {
      ops.append('\t').append(op).append(": 1 1 0 0 0 0 1 1 0\n");
    }
    mountstats = MountStatsSamples.block(STAGING, 20049, ops.toString());
    m.refresh();
    long series = r.scrape().lines().filter(l -> l.startsWith("efs_csi_nfs_")).count();
    assertEquals(5 + 5 * (NfsClientMetrics.OPS.size() + 1), series);
    assertEquals(
        100,
        value(
            r,
            "efs_csi_nfs_request_rtt_seconds_count{op=\"OTHER\",port=\"20049\",pv=\"\","
                + "volume=\"fs-0123::fsap-4567\"}"));
  }
}
