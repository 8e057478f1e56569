package io.efscsi.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.csi.v1.NodePublishVolumeRequest;
import io.efscsi.csi.v1.NodeStageVolumeRequest;
import io.efscsi.csi.v1.NodeUnpublishVolumeRequest;
import io.efscsi.csi.v1.NodeUnstageVolumeRequest;
import io.efscsi.csi.v1.VolumeCapability;
import io.efscsi.csi.v1.VolumeCapability.AccessMode.Mode;
import io.efscsi.supervisor.host.MountInfo;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Amazon S3 Files volumes on the packaged node plugin: a static and a dynamic {@code s3files:}
 * handle staged and published through real proxies speaking TLS (with the S3 Files server name and
 * an IAM client certificate) to a stand-in mount target (stunnel with a certificate for {@code
 * fs-….s3files.us-east-1.on.aws}, in front of nfs-ganesha); what a pod writes is read back over NFS
 * through each volume's proxy. As in NodeIT, the kernel mount is the stand-in command, here binding
 * the export (FAKE_NFS_ROOT) so that the published target shows what the NFS server holds.
 */
class S3FilesNodeIT {

  static final String FS = "fs-12345678";
  static final String SERVER_NAME = FS + ".s3files.us-east-1.on.aws";
  static final String IAM_EXTENSION = "1.3.6.1.4.1.4843.7.2";

  static NfsLab lab;
  static int mountTargetPort;
  Path tmp;
  PackagedDriver node;

  @BeforeAll
  static void startLab() throws Exception {
    lab = new NfsLab(Files.createTempDirectory("efscsi-s3files-lab"), 1);
    lab.selfSigned("s3files", SERVER_NAME);
    mountTargetPort = NfsLab.freePort();
    lab.stunnelServer(
        mountTargetPort, lab.dir.resolve("s3files.crt"), lab.dir.resolve("s3files.key"));
    NfsLab.awaitPort(mountTargetPort, java.time.Duration.ofSeconds(10));
  }

  @AfterAll
  static void stopLab() throws Exception {
    if (lab != null) {
      lab.closeAndDelete();
    }
  }

  @BeforeEach
  void startNode() throws Exception {
    tmp = Files.createTempDirectory("efscsi-s3files-node");
    node =
        NodePlugins.startPlugin(
            tmp,
            "s3files",
            SupervisorIT.freeRange(4),
            mountTargetPort,
            Map.of(
                "FAKE_NFS_ROOT", lab.export.toString(),
                // the IAM signature every S3 Files certificate carries
                "AWS_ACCESS_KEY_ID", "AKIDEFSCSITEST",
                "AWS_SECRET_ACCESS_KEY", "not-a-secret"));
  }

  @AfterEach
  void cleanUp() throws Exception {
    NodePlugins.cleanUp(node, tmp);
  }

  VolumeCapability cap() {
    return NodePlugins.mountCap(
        Mode.MULTI_NODE_MULTI_WRITER, "cafile=" + lab.dir.resolve("s3files.crt"));
  }

  NodeStageVolumeRequest stage(String volumeId, Path staging) {
    return NodeStageVolumeRequest.newBuilder()
        .setVolumeId(volumeId)
        .setStagingTargetPath(staging.toString())
        .setVolumeCapability(cap())
        .putVolumeContext("mounttargetip", "127.0.0.1")
        .build();
  }

  NodePublishVolumeRequest publish(String volumeId, Path staging, Path target) {
    return NodePublishVolumeRequest.newBuilder()
        .setVolumeId(volumeId)
        .setStagingTargetPath(staging.toString())
        .setTargetPath(target.toString())
        .setVolumeCapability(cap())
        .build();
  }

  List<String> records() throws Exception {
    Path proxies = tmp.resolve("state/proxies");
    if (!Files.isDirectory(proxies)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(proxies)) {
      return s.filter(p -> p.toString().endsWith(".json"))
          .map(p -> {
            try {
              return Files.readString(p);
            } catch (java.io.IOException e) {
              throw new java.io.UncheckedIOException(e);
            }
          })
          .toList();
    }
  }

  static String field(String record, String key) {
    return record.replaceAll(
        "(?s).*\"" + java.util.regex.Pattern.quote(key) + "\": \"?([^\",]+)\"?.*", "$1");
  }

  @Test
  void staticAndDynamicS3FilesVolumesAreServedThroughTheirOwnTlsProxies() throws Exception {
    var n = node.node();
    String staticId = "s3files:" + FS;
    String dynamicId = "s3files:" + FS + "::fsap-0123456789abcdef0";
    Path staging1 = tmp.resolve("kubelet/plugins/s3-static/globalmount");
    Path staging2 = tmp.resolve("kubelet/plugins/s3-dynamic/globalmount");
    n.nodeStageVolume(stage(staticId, staging1));
    n.nodeStageVolume(stage(staticId, staging1)); // kubelet retries: nothing new
    n.nodeStageVolume(stage(dynamicId, staging2));

    List<String> records = records();
    assertEquals(2, records.size(), "one proxy per volume: " + records);
    for (String r : records) {
      assertEquals("true", field(r, "tls"), r);
      assertEquals(SERVER_NAME, field(r, "tls.server-name"), r);
      assertEquals("127.0.0.1", field(r, "upstream.host"), r);
      X509Certificate cert;
      try (InputStream in = Files.newInputStream(Path.of(field(r, "tls.cert-file")))) {
        cert = (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
      }
      assertNotNull(cert.getExtensionValue(IAM_EXTENSION), "S3 Files mounts always carry IAM");
    }
    List<String> mounts = Files.readAllLines(tmp.resolve("nfs-mounts.log"));
    assertEquals(2, mounts.size(), "one NFS mount per volume: " + mounts);
    for (String m : mounts) {
      assertTrue(m.contains("nfsvers=4.2"), "mount.s3files' NFS version: " + m);
    }

    Path pod1 = tmp.resolve("kubelet/pods/a/volumes/kubernetes.io~csi/s3-static/mount");
    Path pod2 = tmp.resolve("kubelet/pods/b/volumes/kubernetes.io~csi/s3-dynamic/mount");
    n.nodePublishVolume(publish(staticId, staging1, pod1));
    n.nodePublishVolume(publish(dynamicId, staging2, pod2));
    List<String> published =
        NodePlugins.mountsUnder(tmp).stream().map(MountInfo::mountPoint).toList();
    assertTrue(
        published.contains(pod1.toString()) && published.contains(pod2.toString()), "" + published);

    // What a pod writes into its volume is read back over NFS through that volume's proxy (TLS
    // to the stand-in mount target, then ganesha). (libnfs' NFSv4 writes fail against this
    // ganesha, NFS4ERR_EXIST on create, so the writes go through the pod's side: the stand-in
    // mount binds the export; the kernel VM suite writes through real NFS mounts.)
    Random random = new Random(19);
    int i = 0;
    for (Path pod : List.of(pod1, pod2)) {
      byte[] written = new byte[300_000];
      random.nextBytes(written);
      String name = "s3files-it-" + i + ".bin";
      Files.write(pod.resolve(name), written);
      Path back = tmp.resolve("read-back-" + i + ".bin");
      int port = Integer.parseInt(field(records.get(i), "port"));
      NfsLab.Result read = lab.run("nfs-cp", lab.url(port, name), back.toString());
      assertEquals(0, read.exit(), "read through the proxy on port " + port + ": " + read.output());
      assertArrayEquals(written, Files.readAllBytes(back));
      Files.delete(lab.export.resolve(name));
      i++;
    }

    n.nodeUnpublishVolume(
        NodeUnpublishVolumeRequest.newBuilder()
            .setVolumeId(staticId)
            .setTargetPath(pod1.toString())
            .build());
    n.nodeUnpublishVolume(
        NodeUnpublishVolumeRequest.newBuilder()
            .setVolumeId(dynamicId)
            .setTargetPath(pod2.toString())
            .build());
    n.nodeUnstageVolume(
        NodeUnstageVolumeRequest.newBuilder()
            .setVolumeId(staticId)
            .setStagingTargetPath(staging1.toString())
            .build());
    n.nodeUnstageVolume(
        NodeUnstageVolumeRequest.newBuilder()
            .setVolumeId(dynamicId)
            .setStagingTargetPath(staging2.toString())
            .build());
    assertEquals(List.of(), records(), "the proxies go with their volumes");
    assertEquals(List.of(), NodePlugins.mountsUnder(tmp));
  }

  @Test
  void whatS3FilesRefusesStartsNothing() throws Exception {
    var n = node.node();
    Path staging = tmp.resolve("kubelet/plugins/s3-bad/globalmount");
    StatusRuntimeException e =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                n.nodeStageVolume(
                    stage("s3files:" + FS, staging).toBuilder()
                        .putVolumeContext("encryptInTransit", "false")
                        .build()));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.getStatus().getCode());
    assertTrue(
        e.getStatus().getDescription().startsWith("Encryption in transit cannot be disabled"),
        e.getStatus().getDescription());
    StatusRuntimeException stunnel =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                n.nodeStageVolume(
                    stage("s3files:" + FS, staging).toBuilder()
                        .setVolumeCapability(
                            NodePlugins.mountCap(Mode.MULTI_NODE_MULTI_WRITER, "stunnel"))
                        .build()));
    assertEquals(
        "stunnel mount option is not supported by S3 Files file system.",
        stunnel.getStatus().getDescription());
    assertEquals(List.of(), records());
    assertFalse(Files.exists(tmp.resolve("nfs-mounts.log")), "no mount command was run");
  }
}
