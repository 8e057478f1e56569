package io.efscsi.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Read sizes: adaptive up to the maximum, and never more than a quarter of half the cap left. */
class ReadAllocatorTest {

  private static final int MAX = 1024 * 1024;
  private static final long LIMIT = 16L * 1024 * 1024;

  private final AtomicLong used = new AtomicLong();
  private final ReadAllocator allocator = new ReadAllocator(MAX, used::get, LIMIT);
  private final EmbeddedChannel channel = new EmbeddedChannel();

  /** One read cycle that fills its buffer completely; returns the buffer's capacity. */
  private int fullRead(RecvByteBufAllocator.ExtendedHandle h) {
    h.reset(channel.config());
    ByteBuf b = h.allocate(UnpooledByteBufAllocator.DEFAULT);
    try {
      int capacity = b.writableBytes();
      h.attemptedBytesRead(capacity);
      h.lastBytesRead(capacity);
      h.incMessagesRead(1);
      h.readComplete();
      return capacity;
    } finally {
      b.release();
    }
  }

  @Test
  void readsStartAt64KiBAndGrowToTheMaximumWhileTheyComeBackFull() {
    RecvByteBufAllocator.ExtendedHandle h = allocator.newHandle();
    assertEquals(64 * 1024, fullRead(h));
    int last = 0;
    for (int i = 0; i < 10; i++) {
      last = fullRead(h);
    }
    assertEquals(MAX, last);
  }

  @Test
  void oneReadPerWakeUp() {
    RecvByteBufAllocator.ExtendedHandle h = allocator.newHandle();
    h.reset(channel.config());
    ByteBuf b = h.allocate(UnpooledByteBufAllocator.DEFAULT);
    h.attemptedBytesRead(b.writableBytes());
    h.lastBytesRead(b.writableBytes());
    h.incMessagesRead(1);
    b.release();
    assertEquals(false, h.continueReading(), "a full buffer still ends the wake-up's reads");
  }

  @Test
  void aReadTakesAtMostAQuarterOfWhatIsLeftOfHalfTheCap() {
    RecvByteBufAllocator.ExtendedHandle h = allocator.newHandle();
    for (int i = 0; i < 10; i++) {
      fullRead(h);
    }
    used.set(LIMIT / 2 - 2 * 1024 * 1024);
    assertEquals(512 * 1024, fullRead(h));
    used.set(LIMIT / 2 - 256 * 1024);
    assertEquals(64 * 1024, fullRead(h));
    used.set(LIMIT / 2 - 8 * 1024);
    assertEquals(ReadAllocator.MIN_READ, fullRead(h), "never below the minimum");
    used.set(LIMIT);
    assertEquals(ReadAllocator.MIN_READ, fullRead(h), "over half the cap: the minimum");
    used.set(0);
    int size = 0;
    for (int i = 0; i < 10; i++) {
      size = fullRead(h);
    }
    assertEquals(MAX, size, "back to the full size once memory is back and reads come back full");
  }

  @Test
  void withoutAnAccountOfDirectMemoryOnlyTheAdaptiveSizeCounts() {
    ReadAllocator unknown = new ReadAllocator(MAX, () -> -1, LIMIT);
    assertEquals(300_000, unknown.size(300_000));
    assertEquals(MAX, allocator.size(MAX));
  }
}
