package io.efscsi.common.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.BuildInfo;
import io.efscsi.common.identity.IdentityService;
import io.efscsi.common.identity.Readiness;
import io.efscsi.csi.v1.GetPluginInfoRequest;
import io.efscsi.csi.v1.IdentityGrpc;
import io.efscsi.csi.v1.NodeGetCapabilitiesRequest;
import io.efscsi.csi.v1.NodeGetCapabilitiesResponse;
import io.efscsi.csi.v1.NodeGrpc;
import io.grpc.BindableService;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The real server on a real unix socket (epoll), driven by a real client channel. */
class CsiServerTest {

  @TempDir Path tmp;

  private static List<BindableService> identity() {
    return List.of(
        new IdentityService(
            new BuildInfo("9.9.9", "abc", "today"),
            Set.of(IdentityService.Capability.CONTROLLER_SERVICE),
            new Readiness()));
  }

  @Test
  void servesOnAUnixSocketMadeGroupOnlyAndRemovesItOnShutdown() throws Exception {
    Path socket = tmp.resolve("sub/dir/csi.sock");
    CsiServer server = CsiServer.start(new Endpoint.Unix(socket), identity());
    try (CsiChannels.Client client = CsiChannels.open(server.endpoint())) {
      assertEquals(
          "rw-rw----", PosixFilePermissions.toString(Files.getPosixFilePermissions(socket)));
      assertEquals(
          "efs.csi.aws.com",
          IdentityGrpc.newBlockingStub(client.channel())
              .withDeadlineAfter(5, TimeUnit.SECONDS)
              .getPluginInfo(GetPluginInfoRequest.getDefaultInstance())
              .getName());
    } finally {
      server.shutdown(Duration.ofSeconds(1));
    }
    assertFalse(Files.exists(socket));
  }

  @Test
  void removesAStaleSocketLeftByADeadProcess() throws Exception {
    Path socket = tmp.resolve("csi.sock");
    try (ServerSocketChannel dead = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      dead.bind(UnixDomainSocketAddress.of(socket));
    }
    assertTrue(Files.exists(socket), "closing a unix server socket leaves its file behind");
    CsiServer server = CsiServer.start(new Endpoint.Unix(socket), identity());
    server.shutdown(Duration.ZERO);
  }

  @Test
  void refusesASocketAnotherProcessServes() throws Exception {
    Path socket = tmp.resolve("csi.sock");
    CsiServer first = CsiServer.start(new Endpoint.Unix(socket), identity());
    try {
      IOException e =
          assertThrows(
              IOException.class, () -> CsiServer.start(new Endpoint.Unix(socket), identity()));
      assertTrue(e.getMessage().contains("another process is already serving"), e.getMessage());
    } finally {
      first.shutdown(Duration.ZERO);
    }
  }

  @Test
  void refusesToDeleteARegularFile() throws Exception {
    Path file = Files.writeString(tmp.resolve("csi.sock"), "precious");
    IOException e =
        assertThrows(IOException.class, () -> CsiServer.start(new Endpoint.Unix(file), identity()));
    assertTrue(e.getMessage().contains("is not a socket"), e.getMessage());
    assertEquals("precious", Files.readString(file));
  }

  @Test
  void servesOnTcpToo() throws Exception {
    CsiServer server = CsiServer.start(new Endpoint.Tcp("127.0.0.1", 0), identity());
    try (CsiChannels.Client client =
        CsiChannels.open(new Endpoint.Tcp("127.0.0.1", server.port()))) {
      assertEquals(
          "9.9.9",
          IdentityGrpc.newBlockingStub(client.channel())
              .withDeadlineAfter(5, TimeUnit.SECONDS)
              .getPluginInfo(GetPluginInfoRequest.getDefaultInstance())
              .getVendorVersion());
    } finally {
      server.shutdown(Duration.ZERO);
    }
  }

  /** A node service whose one call takes a while, to test graceful shutdown. */
  static final class SlowNode extends NodeGrpc.NodeImplBase {
    final CountDownLatch entered = new CountDownLatch(1);
    final long millis;

    SlowNode(long millis) {
      this.millis = millis;
    }

    @Override
    public void nodeGetCapabilities(
        NodeGetCapabilitiesRequest request, StreamObserver<NodeGetCapabilitiesResponse> observer) {
      entered.countDown();
      try {
        Thread.sleep(millis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      observer.onNext(NodeGetCapabilitiesResponse.getDefaultInstance());
      observer.onCompleted();
    }
  }

  @Test
  void shutdownLetsInFlightCallsFinishAndRefusesNewOnes() throws Exception {
    Path socket = tmp.resolve("csi.sock");
    SlowNode slow = new SlowNode(800);
    CsiServer server = CsiServer.start(new Endpoint.Unix(socket), List.of(slow));
    try (CsiChannels.Client client = CsiChannels.open(server.endpoint())) {
      var stub = NodeGrpc.newBlockingStub(client.channel()).withDeadlineAfter(10, TimeUnit.SECONDS);
      CompletableFuture<NodeGetCapabilitiesResponse> inFlight =
          CompletableFuture.supplyAsync(
              () -> stub.nodeGetCapabilities(NodeGetCapabilitiesRequest.getDefaultInstance()));
      assertTrue(slow.entered.await(5, TimeUnit.SECONDS));
      CompletableFuture<Void> stopping =
          CompletableFuture.runAsync(() -> server.shutdown(Duration.ofSeconds(5)));
      assertEquals(
          NodeGetCapabilitiesResponse.getDefaultInstance(), inFlight.get(10, TimeUnit.SECONDS));
      stopping.get(10, TimeUnit.SECONDS);
    }
    assertFalse(Files.exists(socket));
  }

  @Test
  void callsStillRunningAfterTheGraceAreCancelled() throws Exception {
    SlowNode slow = new SlowNode(5_000);
    CsiServer server = CsiServer.start(new Endpoint.Unix(tmp.resolve("csi.sock")), List.of(slow));
    try (CsiChannels.Client client = CsiChannels.open(server.endpoint())) {
      var stub = NodeGrpc.newBlockingStub(client.channel()).withDeadlineAfter(10, TimeUnit.SECONDS);
      CompletableFuture<NodeGetCapabilitiesResponse> inFlight =
          CompletableFuture.supplyAsync(
              () -> stub.nodeGetCapabilities(NodeGetCapabilitiesRequest.getDefaultInstance()));
      assertTrue(slow.entered.await(5, TimeUnit.SECONDS));
      long t0 = System.nanoTime();
      server.shutdown(Duration.ofMillis(200));
      assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(4), "grace was not honoured");
      var e =
          assertThrows(
              java.util.concurrent.ExecutionException.class,
              () -> inFlight.get(10, TimeUnit.SECONDS));
      assertTrue(e.getCause() instanceof StatusRuntimeException, e.toString());
      Status.Code code = ((StatusRuntimeException) e.getCause()).getStatus().getCode();
      assertTrue(code == Status.Code.UNAVAILABLE || code == Status.Code.CANCELLED, code.toString());
    }
  }
}
