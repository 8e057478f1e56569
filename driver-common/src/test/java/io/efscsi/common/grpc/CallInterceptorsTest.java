package io.efscsi.common.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.efscsi.common.error.DriverException;
import io.efscsi.csi.v1.NodeGetCapabilitiesRequest;
import io.efscsi.csi.v1.NodeGetCapabilitiesResponse;
import io.efscsi.csi.v1.NodeGrpc;
import io.efscsi.csi.v1.NodePublishVolumeRequest;
import io.efscsi.csi.v1.NodePublishVolumeResponse;
import io.efscsi.csi.v1.NodeStageVolumeRequest;
import io.efscsi.csi.v1.NodeStageVolumeResponse;
import io.efscsi.csi.v1.NodeUnpublishVolumeRequest;
import io.efscsi.csi.v1.NodeUnpublishVolumeResponse;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The interceptors as the server wires them, over in-process gRPC with a real stub. */
class CallInterceptorsTest {

  private static final String SECRET = "s3cr3t-value-AKIAEXAMPLE";

  /** Fails in every way a handler can fail. */
  static final class FailingNode extends NodeGrpc.NodeImplBase {
    @Override
    public void nodePublishVolume(
        NodePublishVolumeRequest request, StreamObserver<NodePublishVolumeResponse> observer) {
      throw new UncheckedIOException(new IOException("mount.nfs4 exited 32"));
    }

    @Override
    public void nodeUnpublishVolume(
        NodeUnpublishVolumeRequest request, StreamObserver<NodeUnpublishVolumeResponse> observer) {
      observer.onError(new IllegalStateException("target busy"));
    }

    @Override
    public void nodeStageVolume(
        NodeStageVolumeRequest request, StreamObserver<NodeStageVolumeResponse> observer) {
      throw DriverException.notFound("file system %s not found", "fs-0123abcd");
    }

    @Override
    public void nodeGetCapabilities(
        NodeGetCapabilitiesRequest request, StreamObserver<NodeGetCapabilitiesResponse> observer) {
      observer.onNext(NodeGetCapabilitiesResponse.getDefaultInstance());
      observer.onCompleted();
    }
  }

  private Server server;
  private ManagedChannel channel;
  private NodeGrpc.NodeBlockingStub node;
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
  private Logger callLogger;

  @BeforeEach
  void start() throws IOException {
    String name = InProcessServerBuilder.generateName();
    server =
        InProcessServerBuilder.forName(name)
            .directExecutor()
            .addService(CsiServer.intercepted(new FailingNode()))
            .build()
            .start();
    channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    node = NodeGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.SECONDS);
    callLogger = (Logger) LoggerFactory.getLogger(CallLoggingInterceptor.LOGGER);
    callLogger.setLevel(Level.DEBUG);
    logs.start();
    callLogger.addAppender(logs);
  }

  @AfterEach
  void stop() throws InterruptedException {
    callLogger.detachAppender(logs);
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
  }

  private Status.Code codeOf(Runnable call) {
    return assertThrows(StatusRuntimeException.class, call::run).getStatus().getCode();
  }

  @Test
  void thrownUncheckedIoIsInternalNotUnknown() {
    StatusRuntimeException e =
        assertThrows(
            StatusRuntimeException.class,
            () ->
                node.nodePublishVolume(
                    NodePublishVolumeRequest.newBuilder().setVolumeId("fs-1").build()));
    assertEquals(Status.Code.INTERNAL, e.getStatus().getCode());
    assertTrue(e.getStatus().getDescription().contains("mount.nfs4 exited 32"));
  }

  @Test
  void rawExceptionPassedToOnErrorIsInternalNotUnknown() {
    assertEquals(
        Status.Code.INTERNAL,
        codeOf(() -> node.nodeUnpublishVolume(NodeUnpublishVolumeRequest.getDefaultInstance())));
  }

  @Test
  void domainExceptionKeepsItsCodeAndMessage() {
    StatusRuntimeException e =
        assertThrows(
            StatusRuntimeException.class,
            () -> node.nodeStageVolume(NodeStageVolumeRequest.getDefaultInstance()));
    assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode());
    assertEquals("file system fs-0123abcd not found", e.getStatus().getDescription());
  }

  @Test
  void unimplementedStaysUnimplemented() {
    assertEquals(
        Status.Code.UNIMPLEMENTED,
        codeOf(() ->
            node.nodeExpandVolume(
                io.efscsi.csi.v1.NodeExpandVolumeRequest.newBuilder()
                    .putSecrets("key", SECRET)
                    .build())));
  }

  @Test
  void secretsNeverReachALogLine() {
    NodePublishVolumeRequest request =
        NodePublishVolumeRequest.newBuilder()
            .setVolumeId("fs-0123abcd::fsap-0123456789abcdef0")
            .setTargetPath("/var/lib/kubelet/pods/p/volumes/kubernetes.io~csi/pv/mount")
            .putSecrets("awsRoleArn", SECRET)
            .putSecrets("externalId", SECRET + "-2")
            .putVolumeContext("encryptInTransit", "true")
            .build();
    codeOf(() -> node.nodePublishVolume(request));
    codeOf(() ->
        node.nodeStageVolume(
            NodeStageVolumeRequest.newBuilder()
                .setVolumeId("fs-1")
                .putSecrets("token", SECRET)
                .build()));

    List<ILoggingEvent> events = List.copyOf(logs.list);
    assertFalse(events.isEmpty());
    for (ILoggingEvent e : events) {
      String line = e.getFormattedMessage() + " " + e.getMDCPropertyMap();
      assertFalse(line.contains(SECRET), "secret leaked: " + line);
    }
    ILoggingEvent called =
        events.stream()
            .filter(e -> e.getFormattedMessage().startsWith("NodePublishVolume called"))
            .findFirst()
            .orElseThrow();
    assertTrue(called.getFormattedMessage().contains(SecretRedactor.STRIPPED));
    assertTrue(called.getFormattedMessage().contains("awsRoleArn"), "secret names stay visible");
    assertTrue(called.getFormattedMessage().contains("encryptInTransit"));
    assertEquals(
        "fs-0123abcd::fsap-0123456789abcdef0", called.getMDCPropertyMap().get("volume_id"));
    assertEquals(
        "/var/lib/kubelet/pods/p/volumes/kubernetes.io~csi/pv/mount",
        called.getMDCPropertyMap().get("target_path"));
  }

  @Test
  void completionLineHasStatusAndDurationAndLevelFollowsTheOutcome() {
    node.nodeGetCapabilities(NodeGetCapabilitiesRequest.getDefaultInstance());
    codeOf(() -> node.nodeStageVolume(NodeStageVolumeRequest.getDefaultInstance()));
    codeOf(() -> node.nodePublishVolume(NodePublishVolumeRequest.getDefaultInstance()));

    ILoggingEvent caps = find("NodeGetCapabilities succeeded in ");
    assertEquals(Level.DEBUG, caps.getLevel(), "high-frequency calls log at DEBUG");
    ILoggingEvent stage = find("NodeStageVolume failed in ");
    assertEquals(Level.WARN, stage.getLevel());
    assertTrue(stage.getFormattedMessage().contains("NOT_FOUND file system fs-0123abcd not found"));
    ILoggingEvent publish = find("NodePublishVolume failed in ");
    assertEquals(Level.ERROR, publish.getLevel());
    assertTrue(
        publish.getFormattedMessage().matches("NodePublishVolume failed in \\d+ ms: INTERNAL .*"));
    assertEquals(Level.INFO, find("NodeStageVolume called").getLevel());
  }

  private ILoggingEvent find(String prefix) {
    return logs.list.stream()
        .filter(e -> e.getFormattedMessage().startsWith(prefix))
        .findFirst()
        .orElseThrow(
            () -> new AssertionError("no log line starting with " + prefix + " in " + logs.list));
  }
}
