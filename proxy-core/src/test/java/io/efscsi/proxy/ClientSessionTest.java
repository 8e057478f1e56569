package io.efscsi.proxy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.proxy.rpc.PartitionBinding;
import io.efscsi.proxy.rpc.RecordFramer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.netty.util.concurrent.Promise;
import java.io.ByteArrayOutputStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The session's routing with in-memory channels: round-robin, scale-up, replies and callbacks. */
class ClientSessionTest {

  static final PartitionBinding.ScaleUp SCALE = new PartitionBinding.ScaleUp(3, 1000, 1, 1);

  long now;
  final ProxyMetrics metrics = new ProxyMetrics();

  /** What each connection attempt gets: a bind reply, a failure, or {@link #PENDING}. */
  final Deque<Object> replies = new ArrayDeque<>();

  /** An attempt that completes only when the test completes it (see {@link #pending}). */
  static final Object PENDING = new Object();

  final List<Promise<UpstreamConnector.Upstream>> pending = new ArrayList<>();
  final List<EmbeddedChannel> upstreams = new ArrayList<>();

  static byte[] partition(int fill) {
    byte[] p = new byte[64];
    Arrays.fill(p, (byte) fill);
    return p;
  }

  static PartitionBinding.Reply ready(int fill) {
    return new PartitionBinding.Reply.Bound(true, partition(fill), SCALE);
  }

  EmbeddedChannel client(int maxConnections) {
    return client(maxConnections, 0);
  }

  EmbeddedChannel client(int maxConnections, long threshold) {
    ClientSession.Connector connector =
        (loop, incarnation) -> {
          Object next = replies.removeFirst();
          if (next instanceof Throwable t) {
            return ImmediateEventExecutor.INSTANCE.newFailedFuture(t);
          }
          if (next == PENDING) {
            Promise<UpstreamConnector.Upstream> p = ImmediateEventExecutor.INSTANCE.newPromise();
            pending.add(p);
            return p;
          }
          EmbeddedChannel up = new EmbeddedChannel();
          upstreams.add(up);
          return ImmediateEventExecutor.INSTANCE.newSucceededFuture(
              new UpstreamConnector.Upstream(up, (PartitionBinding.Reply) next));
        };
    return new EmbeddedChannel(
        new RecordFramer("client"),
        new ClientSession(connector, metrics, maxConnections, threshold, () -> now));
  }

  /** A client whose session shares {@code outage} (as every session of one proxy does). */
  EmbeddedChannel gated(UpstreamOutage outage) {
    ClientSession.Connector connector =
        (loop, incarnation) -> {
          Object next = replies.removeFirst();
          if (next instanceof Throwable t) {
            return ImmediateEventExecutor.INSTANCE.newFailedFuture(t);
          }
          EmbeddedChannel up = new EmbeddedChannel();
          upstreams.add(up);
          return ImmediateEventExecutor.INSTANCE.newSucceededFuture(
              new UpstreamConnector.Upstream(up, (PartitionBinding.Reply) next));
        };
    return new EmbeddedChannel(
        new RecordFramer("client"),
        new ClientSession(connector, metrics, 1, 0, outage, new Sessions()));
  }

  @Test
  void anOutageIsTrackedAcrossSessionsAndEveryReconnectStillTriesTheUpstream() {
    UpstreamOutage outage = new UpstreamOutage(() -> now, 30_000);
    for (int i = 0; i < 50; i++) {
      now += TimeUnit.MILLISECONDS.toNanos(10);
      replies.add(new java.net.ConnectException("Connection refused"));
      assertFalse(gated(outage).isActive(), "closed after its failed attempt");
      assertTrue(replies.isEmpty(), "each reconnect tried the upstream");
    }
    assertTrue(outage.isDown());
    assertEquals(49, outage.failedSinceReport(), "one warning, the rest counted for the summary");
    replies.add(ready(1));
    assertTrue(gated(outage).isActive(), "the upstream is back");
    assertFalse(outage.isDown());
    assertEquals(0, outage.failedSinceReport());
  }

  static byte[] record(int size, int seed) {
    byte[] r = new byte[size + 4];
    new Random(seed).nextBytes(r);
    int mark = 0x8000_0000 | size;
    r[0] = (byte) (mark >>> 24);
    r[1] = (byte) (mark >>> 16);
    r[2] = (byte) (mark >>> 8);
    r[3] = (byte) mark;
    return r;
  }

  static byte[] drain(EmbeddedChannel ch) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteBuf b;
    while ((b = ch.readOutbound()) != null) {
      byte[] bytes = new byte[b.readableBytes()];
      b.readBytes(bytes);
      b.release();
      out.writeBytes(bytes);
    }
    return out.toByteArray();
  }

  /** Two metered seconds over the threshold make the session add connections. */
  void driveOverThreshold(EmbeddedChannel client) {
    for (int s = 0; s < 2; s++) {
      client.writeInbound(Unpooled.wrappedBuffer(record(2000, s)));
      now += TimeUnit.SECONDS.toNanos(1);
      client.advanceTimeBy(1, TimeUnit.SECONDS);
      client.runScheduledPendingTasks();
    }
    for (EmbeddedChannel u : upstreams) {
      drain(u);
    }
  }

  @Test
  void theConfiguredThresholdReplacesTheServersOne() {
    PartitionBinding.ScaleUp highBar = new PartitionBinding.ScaleUp(3, 1L << 40, 1, 1);
    replies.add(new PartitionBinding.Reply.Bound(true, partition(1), highBar));
    replies.add(ready(1));
    replies.add(ready(1));
    driveOverThreshold(client(5, 1000));
    assertEquals(3, upstreams.size(), "2000 B/s is over the configured 1000 B/s");

    upstreams.clear();
    replies.add(ready(1));
    driveOverThreshold(client(5, 1L << 40));
    assertEquals(1, upstreams.size(), "the server's 1000 B/s is replaced by the configured bar");
    assertEquals(1, metrics.scaleUps.sum());
  }

  @Test
  void singleUpstreamGetsEveryRecordByteForByte() {
    replies.add(ready(1));
    EmbeddedChannel client = client(5);
    byte[] a = record(100, 1);
    byte[] b = record(70_000, 2);
    client.writeInbound(Unpooled.wrappedBuffer(a), Unpooled.wrappedBuffer(b));
    ByteArrayOutputStream expected = new ByteArrayOutputStream();
    expected.writeBytes(a);
    expected.writeBytes(b);
    assertArrayEquals(expected.toByteArray(), drain(upstreams.getFirst()));
    assertEquals(2, metrics.recordsToServer.sum());
  }

  @Test
  void overTheThresholdItScalesUpOnThePartitionAndRoundRobinsWholeRecords() {
    replies.add(ready(1));
    replies.add(ready(1));
    replies.add(ready(1));
    EmbeddedChannel client = client(5);
    driveOverThreshold(client);
    assertEquals(3, upstreams.size(), "min(server max 3, ours 5) connections");
    assertEquals(1, metrics.scaleUps.sum());

    List<byte[]> sent = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      byte[] r = record(1000 + i, 100 + i);
      sent.add(r);
      // split each record over two reads: a record must not be split over connections
      client.writeInbound(Unpooled.wrappedBuffer(r, 0, 500));
      client.writeInbound(Unpooled.wrappedBuffer(r, 500, r.length - 500));
    }
    int total = 0;
    for (EmbeddedChannel u : upstreams) {
      byte[] got = drain(u);
      assertEquals(2, countWholeRecords(got, sent), "each connection gets two whole records");
      total += got.length;
    }
    assertEquals(sent.stream().mapToInt(r -> r.length).sum(), total);
  }

  /** Counts how many of {@code sent} appear, whole and in order, back to back in {@code got}. */
  static int countWholeRecords(byte[] got, List<byte[]> sent) {
    int at = 0;
    int n = 0;
    while (at < got.length) {
      boolean matched = false;
      for (byte[] r : sent) {
        if (at + r.length <= got.length && Arrays.equals(got, at, at + r.length, r, 0, r.length)) {
          at += r.length;
          n++;
          matched = true;
          break;
        }
      }
      if (!matched) {
        throw new AssertionError("bytes at " + at + " are not the start of a whole record");
      }
    }
    return n;
  }

  static PartitionBinding.Reply retry(boolean later, PartitionBinding.ScaleUp scale) {
    return new PartitionBinding.Reply.Retry(later, "try again", scale);
  }

  /** efs-utils: RETRY, PREFERRED and READY elsewhere are dropped and tried again. */
  @Test
  void retryPreferredAndOtherPartitionsAreDroppedAndTriedAgainUntilThePartitionIsFull() {
    replies.add(ready(1));
    replies.add(ready(2));
    replies.add(retry(false, SCALE));
    replies.add(new PartitionBinding.Reply.Bound(false, partition(1), SCALE));
    replies.add(new java.io.IOException("connection refused"));
    replies.add(ready(1));
    replies.add(ready(1));
    EmbeddedChannel client = client(5);
    driveOverThreshold(client);
    assertTrue(replies.isEmpty(), "every answer was used");
    assertEquals(6, upstreams.size());
    assertEquals(6, metrics.scaleUpAttempts.sum(), "five tries and one failed connect");
    assertEquals(1, metrics.scaleUps.sum());
    for (int i = 1; i <= 3; i++) {
      assertFalse(upstreams.get(i).isOpen(), "not READY on partition 1: closed");
    }
    List<EmbeddedChannel> used = List.of(upstreams.get(0), upstreams.get(4), upstreams.get(5));
    assertTrue(used.stream().allMatch(EmbeddedChannel::isOpen));
    for (int i = 0; i < 3; i++) {
      client.writeInbound(Unpooled.wrappedBuffer(record(10, i)));
    }
    for (EmbeddedChannel u : used) {
      assertEquals(14, drain(u).length, "one record each, round-robin over the three");
    }
  }

  /** RETRY_LATER and ERROR end the search; the reply's scale-up config is adopted. */
  @Test
  void retryLaterOrErrorStopsTheSearchAndAdoptsTheServersConfig() {
    PartitionBinding.ScaleUp one = new PartitionBinding.ScaleUp(1, 1000, 1, 1);
    for (PartitionBinding.Reply stop :
        List.of(retry(true, one), new PartitionBinding.Reply.Failed("no", one))) {
      upstreams.clear();
      replies.clear();
      replies.add(ready(1));
      replies.add(stop);
      replies.add(ready(1));
      EmbeddedChannel client = client(5);
      driveOverThreshold(client);
      assertEquals(2, upstreams.size(), "no attempt after " + stop);
      assertFalse(upstreams.get(1).isOpen());
      now += TimeUnit.SECONDS.toNanos(400);
      driveOverThreshold(client);
      assertEquals(2, upstreams.size(), "the server now allows one connection: " + stop);
      byte[] r = record(10, 9);
      client.writeInbound(Unpooled.wrappedBuffer(r));
      assertArrayEquals(r, drain(upstreams.getFirst()));
    }
  }

  @Test
  void aServerThatKeepsSayingRetryGetsAtMost120AttemptsThenABackOff() {
    replies.add(ready(1));
    for (int i = 0; i < 120; i++) {
      replies.add(retry(false, SCALE));
    }
    EmbeddedChannel client = client(5);
    driveOverThreshold(client);
    assertEquals(121, upstreams.size());
    assertEquals(120, metrics.scaleUpAttempts.sum());
    assertTrue(upstreams.stream().skip(1).noneMatch(EmbeddedChannel::isOpen));
    driveOverThreshold(client);
    assertEquals(121, upstreams.size(), "five minutes before the next search");
    replies.add(ready(1));
    replies.add(ready(1));
    now += TimeUnit.SECONDS.toNanos(300);
    driveOverThreshold(client); // the first metered second spans the 300 s: under the bar
    driveOverThreshold(client);
    assertEquals(123, upstreams.size(), "searched again after the back-off");
    assertEquals(2, metrics.scaleUps.sum());
  }

  @Test
  void aTlsFailureStopsTheSearch() {
    replies.add(ready(1));
    replies.add(
        new UpstreamConnector.TlsFailedException("TLS handshake failed", new Exception("x")));
    replies.add(ready(1));
    replies.add(ready(1));
    driveOverThreshold(client(5));
    assertEquals(1, upstreams.size());
    assertEquals(1, metrics.scaleUpAttempts.sum());
    assertEquals(2, replies.size());
  }

  /** Attempts still running after 15 s are dropped when they complete. */
  @Test
  void theSearchEndsAfter15SecondsAndLateConnectionsAreDropped() {
    replies.add(ready(1));
    replies.add(PENDING);
    replies.add(PENDING);
    EmbeddedChannel client = client(5);
    driveOverThreshold(client);
    assertEquals(2, pending.size(), "two attempts for the two missing connections");
    client.advanceTimeBy(15, TimeUnit.SECONDS);
    client.runScheduledPendingTasks();
    EmbeddedChannel late = new EmbeddedChannel();
    pending.getFirst().setSuccess(new UpstreamConnector.Upstream(late, ready(1)));
    assertFalse(late.isOpen(), "the search is over");
    assertEquals(0, drain(upstreams.getFirst()).length);
    byte[] r = record(10, 9);
    client.writeInbound(Unpooled.wrappedBuffer(r), Unpooled.wrappedBuffer(r));
    assertEquals(2 * r.length, drain(upstreams.getFirst()).length, "still one connection");
  }

  @Test
  void repliesAndCallbacksFromSeveralConnectionsAreNeverInterleavedMidRecord() {
    replies.add(ready(1));
    replies.add(ready(1));
    replies.add(ready(1));
    EmbeddedChannel client = client(5);
    driveOverThreshold(client);
    EmbeddedChannel u1 = upstreams.get(0);
    EmbeddedChannel u2 = upstreams.get(1);

    byte[] reply = record(5000, 7);
    byte[] callback =
        record(300, 8); // a CB_SEQUENCE-style call from the server on another connection
    u1.writeInbound(Unpooled.wrappedBuffer(reply, 0, 2000));
    u2.writeInbound(Unpooled.wrappedBuffer(callback));
    u1.writeInbound(Unpooled.wrappedBuffer(reply, 2000, reply.length - 2000));
    client.runPendingTasks();

    ByteArrayOutputStream expected = new ByteArrayOutputStream();
    expected.writeBytes(reply);
    expected.writeBytes(callback);
    assertArrayEquals(expected.toByteArray(), drain(client));
    assertEquals(2, metrics.recordsToClient.sum());
  }

  @Test
  void losingAnUpstreamEndsTheIncarnationSoTheKernelReconnects() {
    replies.add(ready(1));
    EmbeddedChannel client = client(5);
    upstreams.getFirst().close();
    client.runPendingTasks();
    assertFalse(client.isOpen());
  }

  @Test
  void theClientGoingAwayClosesItsUpstreams() {
    replies.add(ready(1));
    EmbeddedChannel client = client(5);
    client.close();
    assertTrue(upstreams.stream().noneMatch(EmbeddedChannel::isOpen));
    assertEquals(0, metrics.activeClients.get());
  }
}
