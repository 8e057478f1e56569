package io.efscsi.proxy.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class RecordFramerTest {

  /** A record as the kernel writes it: fragments of the given sizes, the last one marked. */
  static byte[] record(Random random, int... fragments) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = 0; i < fragments.length; i++) {
      int mark = fragments[i] | (i == fragments.length - 1 ? 0x8000_0000 : 0);
      out.write(mark >>> 24);
      out.write(mark >>> 16);
      out.write(mark >>> 8);
      out.write(mark);
      byte[] body = new byte[fragments[i]];
      random.nextBytes(body);
      out.writeBytes(body);
    }
    return out.toByteArray();
  }

  record Seen(byte[] bytes, int starts, int ends, List<Integer> recordLengths) {}

  static Seen feed(EmbeddedChannel ch, byte[] stream, int piece) {
    for (int i = 0; i < stream.length; i += piece) {
      ch.writeInbound(Unpooled.wrappedBuffer(stream, i, Math.min(piece, stream.length - i)));
    }
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    int starts = 0;
    int ends = 0;
    int current = -1;
    List<Integer> lengths = new ArrayList<>();
    RecordChunk c;
    while ((c = ch.readInbound()) != null) {
      ByteBuf b = c.content();
      byte[] bytes = new byte[b.readableBytes()];
      b.readBytes(bytes);
      c.release();
      all.writeBytes(bytes);
      if (c.start()) {
        starts++;
        assertEquals(-1, current, "a record started inside another");
        current = 0;
      }
      assertTrue(current >= 0, "a chunk outside any record");
      current += bytes.length;
      if (c.end()) {
        ends++;
        lengths.add(current);
        current = -1;
      }
    }
    return new Seen(all.toByteArray(), starts, ends, lengths);
  }

  @Test
  void bytesPassThroughUnchangedWhateverTheReadSizes() {
    Random r = new Random(42);
    ByteArrayOutputStream s = new ByteArrayOutputStream();
    s.writeBytes(record(r, 40));
    s.writeBytes(record(r, 100, 3, 0, 7)); // multi-fragment, with an empty fragment
    s.writeBytes(record(r, 0));
    s.writeBytes(record(r, 70_000));
    byte[] stream = s.toByteArray();
    for (int piece : new int[] {1, 2, 3, 5, 7, 64, 1000, 65536, stream.length}) {
      EmbeddedChannel ch = new EmbeddedChannel(new RecordFramer("client"));
      Seen seen = feed(ch, stream, piece);
      assertArrayEquals(stream, seen.bytes(), "piece " + piece);
      assertEquals(4, seen.starts(), "piece " + piece);
      assertEquals(4, seen.ends(), "piece " + piece);
      assertEquals(List.of(44, 126, 4, 70_004), seen.recordLengths(), "piece " + piece);
      assertEquals(4, ch.pipeline().get(RecordFramer.class).records());
      assertFalse(ch.finish());
    }
  }

  @Test
  void aPartialRecordIsStreamedNotHeld() {
    EmbeddedChannel ch = new EmbeddedChannel(new RecordFramer("client"));
    byte[] rec = record(new Random(1), 1000);
    ch.writeInbound(Unpooled.wrappedBuffer(rec, 0, 600));
    RecordChunk first = ch.readInbound();
    assertEquals(600, first.content().readableBytes());
    assertTrue(first.start());
    assertFalse(first.end());
    first.release();
    ch.writeInbound(Unpooled.wrappedBuffer(rec, 600, rec.length - 600));
    RecordChunk second = ch.readInbound();
    assertFalse(second.start());
    assertTrue(second.end());
    second.release();
    assertNull(ch.readInbound());
  }

  @Test
  void theLargestKernelFragmentPassesAndOneByteMoreIsRefused() {
    EmbeddedChannel ok = new EmbeddedChannel(new RecordFramer("client"));
    byte[] max = record(new Random(2), RecordFramer.MAX_FRAGMENT);
    Seen seen = feed(ok, max, 65536);
    assertEquals(List.of(RecordFramer.MAX_FRAGMENT + 4), seen.recordLengths());

    EmbeddedChannel bad = new EmbeddedChannel(new RecordFramer("client"));
    ByteBuf header = Unpooled.buffer().writeInt(0x8000_0000 | (RecordFramer.MAX_FRAGMENT + 1));
    RecordFramer.FrameException e =
        assertThrows(RecordFramer.FrameException.class, () -> bad.writeInbound(header));
    assertTrue(
        e.getMessage().contains("client sent a record fragment of 1052673 bytes"), e.getMessage());
  }

  @Test
  void garbageIsRefusedAndNothingAfterItIsPassedOn() {
    EmbeddedChannel ch = new EmbeddedChannel(new RecordFramer("server"));
    byte[] garbage =
        "GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
    assertThrows(
        RecordFramer.FrameException.class, () -> ch.writeInbound(Unpooled.wrappedBuffer(garbage)));
    ch.writeInbound(Unpooled.wrappedBuffer(record(new Random(3), 10)));
    RecordChunk c;
    while ((c = ch.readInbound()) != null) {
      c.release();
    }
    ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {1, 2, 3}));
    assertNull(ch.readInbound(), "after a framing error the stream is dead");
  }
}
