package io.efscsi.proxy.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.proxy.config.ProxyConfig.BindProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.netty.util.concurrent.Promise;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class BindHandlerTest {

  private final Promise<PartitionBinding.Reply> result =
      ImmediateEventExecutor.INSTANCE.newPromise();

  private BindHandler handler() {
    return new BindHandler(
        BindProtocol.AWSFILE_V3, PartitionBindingTest.ID, 3, false, Duration.ofSeconds(1), result);
  }

  private EmbeddedChannel channel() {
    return new EmbeddedChannel(handler());
  }

  private static ByteBuf withMark(ByteBuf body) {
    return Unpooled.wrappedBuffer(
        Unpooled.buffer(4).writeInt(0x8000_0000 | body.readableBytes()), body);
  }

  @Test
  void sendsTheCallFirstThenParsesARepliesSplitAnywhereAndStepsAside() {
    EmbeddedChannel ch = channel();
    ByteBuf call = ch.readOutbound();
    int xid = call.getInt(4);
    assertEquals(400123, call.getInt(16));
    call.release();

    ByteBuf reply =
        withMark(
            PartitionBindingTest.reply(xid, 0, 3, PartitionBindingTest.partition(9), 5, 100, 1, 1));
    ByteBuf after = Unpooled.wrappedBuffer(new byte[] {42, 43});
    ByteBuf all = Unpooled.wrappedBuffer(reply, after);
    ch.writeInbound(all.readRetainedSlice(3));
    assertFalse(result.isDone());
    ch.writeInbound(all.readRetainedSlice(all.readableBytes()));
    all.release();

    var bound = assertInstanceOf(PartitionBinding.Reply.Bound.class, result.getNow());
    assertTrue(bound.ready());
    assertNull(ch.pipeline().get(BindHandler.class), "the handler removed itself");
    ByteBuf rest = ch.readInbound();
    assertEquals(2, rest.readableBytes(), "bytes after the reply are passed on, not lost");
    rest.release();
  }

  @Test
  void noReplyInTimeFailsAndCloses() {
    EmbeddedChannel ch = channel();
    ((ByteBuf) ch.readOutbound()).release();
    ch.advanceTimeBy(2, TimeUnit.SECONDS);
    ch.runScheduledPendingTasks();
    assertTrue(result.isDone());
    assertTrue(
        result.cause().getMessage().contains("no BindClientToPartition reply within 1000 ms"));
    assertFalse(ch.isOpen());
  }

  @Test
  void garbageReplyFailsAndCloses() {
    EmbeddedChannel ch = channel();
    ((ByteBuf) ch.readOutbound()).release();
    ch.writeInbound(
        Unpooled.wrappedBuffer(
            "HTTP/1.1 400 Bad".getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
    assertTrue(result.cause().getMessage().contains("bad BindClientToPartition reply"));
    assertFalse(ch.isOpen());
  }

  @Test
  void closeBeforeTheReplyFails() {
    EmbeddedChannel ch = channel();
    ((ByteBuf) ch.readOutbound()).release();
    ch.close();
    assertTrue(result.cause().getMessage().contains("connection closed before the bind reply"));
  }

  @Test
  void addedToAConnectedChannelItSendsTheCallOnce() {
    EmbeddedChannel ch = new EmbeddedChannel();
    assertTrue(ch.isActive());
    ch.pipeline().addLast(handler());
    ByteBuf call = ch.readOutbound();
    assertEquals(400123, call.getInt(16));
    call.release();
    assertNull(ch.readOutbound(), "one call");
    ch.close();
  }

  @Test
  void aChannelActiveFromItsStartGetsOneCallToo() {
    EmbeddedChannel ch = channel();
    ByteBuf call = ch.readOutbound();
    call.release();
    assertNull(ch.readOutbound(), "one call");
    ch.close();
  }
}
