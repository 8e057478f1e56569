package io.efscsi.proxy.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.ByteBuffer;

/**
 * Any byte stream, cut into reads of any size and framed as the proxy frames it: the calls counted
 * are the records whose first fragment holds a message type of 0 (CALL) at bytes 8-11, as a plain
 * reading of the whole stream finds them.
 */
class OutstandingCallsFuzzTest {

  // CI's budget is a count of inputs (about what 5 s of fuzzing ran alone on this kind
  // of machine), not a time: the tier runs beside the ITs on the CPU they leave idle, where a
  // time budget ran a sixth as many (docs/reliability.md, "Fuzzed parsers")
  @FuzzTest(maxDuration = "300s", maxExecutions = 160_000)
  void callsAreTheRecordsAPlainReadingCalls(FuzzedDataProvider data) {
    EmbeddedChannel ch = new EmbeddedChannel(new RecordFramer("client"));
    OutstandingCalls calls = new OutstandingCalls();
    java.io.ByteArrayOutputStream sent = new java.io.ByteArrayOutputStream();
    boolean refused = false;
    while (data.remainingBytes() > 0 && !refused) {
      byte[] piece = data.consumeBytes(data.consumeInt(1, 512));
      if (piece.length == 0) {
        break;
      }
      sent.writeBytes(piece);
      try {
        ch.writeInbound(Unpooled.wrappedBuffer(piece));
        ch.checkException();
      } catch (RecordFramer.FrameException e) {
        refused = true;
      }
      RecordChunk c;
      while ((c = ch.readInbound()) != null) {
        calls.sent(c);
        c.release();
      }
    }
    ch.finishAndReleaseAll();
    assertEquals(plainCount(sent.toByteArray()), calls.calls());
  }

  /** Complete records whose first fragment is at least 8 bytes and has type 0 at bytes 4-7. */
  private static long plainCount(byte[] stream) {
    ByteBuffer b = ByteBuffer.wrap(stream);
    long n = 0;
    int at = 0;
    boolean first = true;
    boolean call = false;
    while (at + 4 <= stream.length) {
      int mark = b.getInt(at);
      int length = mark & 0x7fff_ffff;
      if (length > RecordFramer.MAX_FRAGMENT || (long) at + 4 + length > stream.length) {
        return n;
      }
      if (first) {
        call = length >= 8 && b.getInt(at + 8) == OncRpc.CALL;
      }
      at += 4 + length;
      first = mark < 0;
      if (mark < 0 && call) {
        n++;
      }
    }
    return n;
  }
}
