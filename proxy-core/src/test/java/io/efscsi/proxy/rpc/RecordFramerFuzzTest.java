package io.efscsi.proxy.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Any byte stream from a client, cut into reads of any size: the framer passes on exactly the bytes
 * it was given, in records that start and end once each and end where a plain reading of RFC 5531's
 * record marks (in this test) says they end, or stops at a fragment over the limit with a {@link
 * RecordFramer.FrameException}, exactly when that reading finds one; every buffer is released
 * either way.
 */
class RecordFramerFuzzTest {

  // CI's budget is a count of inputs (about what 10 s of fuzzing ran alone on this kind
  // of machine), not a time: the tier runs beside the ITs on the CPU they leave idle, where a
  // time budget ran a sixth as many (docs/reliability.md, "Fuzzed parsers")
  @FuzzTest(maxDuration = "300s", maxExecutions = 350_000)
  void anyStreamIsFramedExactlyOrRefused(FuzzedDataProvider data) {
    EmbeddedChannel ch = new EmbeddedChannel(new RecordFramer("client"));
    List<ByteBuf> given = new ArrayList<>();
    ByteArrayOutputStream sent = new ByteArrayOutputStream();
    boolean refused = false;
    while (data.remainingBytes() > 0 && !refused) {
      byte[] piece = data.consumeBytes(data.consumeInt(1, 4096));
      if (piece.length == 0) {
        break; // a socket read has bytes (an empty wrapped buffer is a shared one, never released)
      }
      ByteBuf b = Unpooled.wrappedBuffer(piece);
      given.add(b);
      sent.writeBytes(piece);
      try {
        ch.writeInbound(b);
        ch.checkException();
      } catch (RecordFramer.FrameException e) {
        refused = true;
      }
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    List<Integer> ends = new ArrayList<>();
    boolean inRecord = false;
    RecordChunk c;
    while ((c = ch.readInbound()) != null) {
      assertTrue(c.start() != inRecord, "a record started inside another, or a chunk outside one");
      inRecord = !c.end();
      ByteBuf b = c.content();
      byte[] bytes = new byte[b.readableBytes()];
      b.readBytes(bytes);
      c.release();
      out.writeBytes(bytes);
      if (c.end()) {
        ends.add(out.size());
      }
    }
    byte[] all = sent.toByteArray();
    byte[] passed = out.toByteArray();
    List<Integer> expectedEnds = new ArrayList<>();
    boolean overLimit = recordEnds(all, expectedEnds);
    assertEquals(overLimit, refused, "refused exactly at a fragment over the limit");
    assertEquals(
        expectedEnds.subList(0, refused ? ends.size() : expectedEnds.size()),
        ends,
        "records end where their last fragment ends");
    if (refused) {
      assertTrue(passed.length <= all.length);
      assertArrayEquals(Arrays.copyOf(all, passed.length), passed, "a prefix, then the refusal");
    } else {
      assertArrayEquals(all, passed, "every byte passed on, in order");
    }
    ch.finishAndReleaseAll();
    for (ByteBuf b : given) {
      assertEquals(0, b.refCnt(), "a read buffer was not released");
    }
  }

  /**
   * RFC 5531 section 11 read plainly: 4-byte marks (top bit: last fragment, the rest: its length)
   * each followed by that many bytes. Adds the offset after each complete record to {@code ends};
   * true when a complete mark announces a fragment over {@link RecordFramer#MAX_FRAGMENT}.
   */
  private static boolean recordEnds(byte[] stream, List<Integer> ends) {
    ByteBuffer b = ByteBuffer.wrap(stream);
    long at = 0;
    while (at + 4 <= stream.length) {
      int mark = b.getInt((int) at);
      int length = mark & 0x7fff_ffff;
      if (length > RecordFramer.MAX_FRAGMENT) {
        return true;
      }
      at += 4 + length;
      if (at > stream.length) {
        return false;
      }
      if (mark < 0) {
        ends.add((int) at);
      }
    }
    return false;
  }
}
