package io.efscsi.it;

import io.efscsi.common.grpc.CsiChannels;
import io.efscsi.common.grpc.Endpoint;
import io.efscsi.csi.v1.IdentityGrpc;
import io.efscsi.csi.v1.NodeGrpc;
import io.efscsi.csi.v1.NodePublishVolumeRequest;
import io.efscsi.csi.v1.NodeStageVolumeRequest;
import io.efscsi.csi.v1.NodeUnpublishVolumeRequest;
import io.efscsi.csi.v1.NodeUnstageVolumeRequest;
import io.efscsi.csi.v1.ProbeRequest;
import io.efscsi.csi.v1.VolumeCapability;
import io.grpc.StatusRuntimeException;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A small CSI client for the kernel VM suite: it talks to the packaged node plugin over its unix
 * socket as kubelet does, driven by line commands on stdin (one answer line each, "ok …" or "error
 * CODE description"), so that one JVM start serves a whole lane of scenarios: each plugin start
 * connects it to that plugin's socket (a JVM start under the VM's emulated CPU costs 13-21 s of it,
 * which the plugin starting beside it lacked):
 *
 * <pre>
 * connect &lt;socket&gt;        (answers "ok connected &lt;socket&gt;"; the previous channel is closed)
 * disconnect              (answers "ok disconnected")
 * probe
 * stage &lt;volumeId&gt; &lt;stagingPath&gt; &lt;k=v,…|-&gt; [mountFlag …]
 * publish &lt;volumeId&gt; &lt;stagingPath&gt; &lt;targetPath&gt;
 * unpublish &lt;volumeId&gt; &lt;targetPath&gt;
 * unstage &lt;volumeId&gt; &lt;stagingPath&gt;
 * quit
 * </pre>
 */
public final class CsiClient {

  private CsiClient() {}

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    CsiChannels.Client client = args.length > 0 ? connect(args[0]) : null;
    out.println("started");
    String line;
    while ((line = in.readLine()) != null) {
      String[] w = line.trim().split("\\s+");
      if (w[0].equals("quit")) {
        out.println("ok");
        break;
      }
      if (w[0].equals("connect") || w[0].equals("disconnect")) {
        if (client != null) {
          client.close();
        }
        client = w[0].equals("connect") ? connect(w[1]) : null;
        out.println(client != null ? "ok connected " + w[1] : "ok disconnected");
        continue;
      }
      if (client == null) {
        out.println("error CLIENT not connected to a plugin");
        continue;
      }
      try {
        out.println("ok " + call(client, w));
      } catch (StatusRuntimeException e) {
        out.println(
            "error "
                + e.getStatus().getCode()
                + " "
                + String.valueOf(e.getStatus().getDescription()).replace('\n', ' '));
      } catch (RuntimeException e) {
        out.println("error CLIENT " + e.toString().replace('\n', ' '));
      }
    }
    System.exit(0); // the gRPC channel's threads would keep the JVM alive
  }

  private static CsiChannels.Client connect(String socket) {
    return CsiChannels.open(new Endpoint.Unix(Path.of(socket)));
  }

  private static String call(CsiChannels.Client client, String[] w) {
    // 300 s: on the VM's emulated CPU (TCG) the first TLS stage of a plugin can wait up to about
    // two minutes for the node's RSA-3072 client key (generated once per plugin, in milliseconds on
    // a real CPU); kubelet would retry its 2-minute call, a scenario step does not
    NodeGrpc.NodeBlockingStub node =
        NodeGrpc.newBlockingStub(client.channel()).withDeadlineAfter(300, TimeUnit.SECONDS);
    return switch (w[0]) {
      case "probe" ->
          Boolean.toString(
              IdentityGrpc.newBlockingStub(client.channel())
                  .withDeadlineAfter(10, TimeUnit.SECONDS)
                  .probe(ProbeRequest.getDefaultInstance())
                  .getReady()
                  .getValue());
      case "stage" -> {
        Map<String, String> ctx = new LinkedHashMap<>();
        if (!w[3].equals("-")) {
          for (String kv : w[3].split(",")) {
            ctx.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
          }
        }
        node.nodeStageVolume(
            NodeStageVolumeRequest.newBuilder()
                .setVolumeId(w[1])
                .setStagingTargetPath(w[2])
                .setVolumeCapability(capability(Arrays.asList(w).subList(4, w.length)))
                .putAllVolumeContext(ctx)
                .build());
        yield "staged";
      }
      case "publish" -> {
        node.nodePublishVolume(
            NodePublishVolumeRequest.newBuilder()
                .setVolumeId(w[1])
                .setStagingTargetPath(w[2])
                .setTargetPath(w[3])
                .setVolumeCapability(capability(List.of()))
                .build());
        yield "published";
      }
      case "unpublish" -> {
        node.nodeUnpublishVolume(
            NodeUnpublishVolumeRequest.newBuilder().setVolumeId(w[1]).setTargetPath(w[2]).build());
        yield "unpublished";
      }
      case "unstage" -> {
        node.nodeUnstageVolume(
            NodeUnstageVolumeRequest.newBuilder()
                .setVolumeId(w[1])
                .setStagingTargetPath(w[2])
                .build());
        yield "unstaged";
      }
      default -> throw new IllegalArgumentException("unknown command " + w[0]);
    };
  }

  private static VolumeCapability capability(List<String> flags) {
    return VolumeCapability.newBuilder()
        .setMount(VolumeCapability.MountVolume.newBuilder().addAllMountFlags(flags))
        .setAccessMode(
            VolumeCapability.AccessMode.newBuilder()
                .setMode(VolumeCapability.AccessMode.Mode.MULTI_NODE_MULTI_WRITER))
        .build();
  }
}
