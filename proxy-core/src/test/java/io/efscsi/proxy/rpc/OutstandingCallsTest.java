package io.efscsi.proxy.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** Calls and replies counted from the message type of each record, however the stream is cut. */
class OutstandingCallsTest {

  /** A one-fragment record: mark, xid, type, then {@code body} bytes. */
  static byte[] record(int xid, int type, int body) {
    return ByteBuffer.allocate(12 + body)
        .putInt(0x8000_0000 | (8 + body))
        .putInt(xid)
        .putInt(type)
        .array();
  }

  /** The same record in two fragments, the first {@code first} bytes long. */
  static byte[] twoFragments(int xid, int type, int first, int second) {
    ByteBuffer b = ByteBuffer.allocate(8 + first + second);
    b.putInt(first).putInt(xid).putInt(type);
    b.position(4 + first);
    b.putInt(0x8000_0000 | second);
    return b.array();
  }

  /** Feeds {@code stream} through the framer, cut after {@code cut} bytes, as the kernel's. */
  static OutstandingCalls sent(byte[] stream, int cut) {
    OutstandingCalls calls = new OutstandingCalls();
    EmbeddedChannel ch = new EmbeddedChannel(new RecordFramer("client"));
    ch.writeInbound(Unpooled.wrappedBuffer(stream, 0, cut));
    ch.writeInbound(Unpooled.wrappedBuffer(stream, cut, stream.length - cut));
    RecordChunk c;
    while ((c = ch.readInbound()) != null) {
      calls.sent(c);
      c.release();
    }
    return calls;
  }

  @Test
  void callsAreCountedWhereverTheStreamIsCut() {
    ByteArrayOutputStream s = new ByteArrayOutputStream();
    s.writeBytes(record(1, OncRpc.CALL, 30));
    s.writeBytes(record(2, OncRpc.REPLY, 0)); // the kernel's reply to a server callback
    s.writeBytes(twoFragments(3, OncRpc.CALL, 12, 20));
    s.writeBytes(record(4, OncRpc.CALL, 0));
    byte[] stream = s.toByteArray();
    for (int cut = 0; cut <= stream.length; cut++) {
      assertEquals(3, sent(stream, cut).calls(), "cut after " + cut + " bytes");
    }
  }

  @Test
  void aCallCutOffHalfwayIsNotWaitedFor() {
    byte[] r = record(1, OncRpc.CALL, 30);
    OutstandingCalls calls = sent(java.util.Arrays.copyOf(r, 20), 10);
    assertEquals(0, calls.outstanding());
  }

  @Test
  void repliesRelayedSettleTheCallsAndCallbacksDoNot() {
    OutstandingCalls calls = new OutstandingCalls();
    calls.sent(new RecordChunk(Unpooled.wrappedBuffer(record(1, OncRpc.CALL, 0)), true, true));
    calls.sent(new RecordChunk(Unpooled.wrappedBuffer(record(2, OncRpc.CALL, 0)), true, true));
    assertEquals(2, calls.outstanding());
    calls.relayed(new RecordChunk(Unpooled.wrappedBuffer(record(9, OncRpc.CALL, 4)), true, true));
    assertEquals(2, calls.outstanding(), "a server callback settles nothing");
    byte[] reply = record(1, OncRpc.REPLY, 20);
    calls.relayed(new RecordChunk(Unpooled.wrappedBuffer(reply, 0, 9), true, false));
    assertEquals(2, calls.outstanding(), "counted once the whole reply is relayed");
    calls.relayed(new RecordChunk(Unpooled.wrappedBuffer(reply, 9, reply.length - 9), false, true));
    assertEquals(1, calls.outstanding());
    calls.relayed(new RecordChunk(Unpooled.wrappedBuffer(record(2, OncRpc.REPLY, 0)), true, true));
    calls.relayed(new RecordChunk(Unpooled.wrappedBuffer(record(3, OncRpc.REPLY, 0)), true, true));
    assertEquals(0, calls.outstanding(), "a stray reply does not make it negative");
  }

  @Test
  void aFirstFragmentTooShortForTheTypeCountsAsNeither() {
    byte[] r = twoFragments(1, OncRpc.CALL, 4, 30);
    assertEquals(0, sent(r, r.length).calls());
  }
}
