package io.efscsi.proxy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.RecvByteBufAllocator;
import io.netty.util.UncheckedBooleanSupplier;
import io.netty.util.internal.PlatformDependent;
import java.util.function.LongSupplier;

/**
 * Read buffers for every socket of the proxy: one read per wake-up, sized by what the last reads
 * got (Netty's adaptive sizing between 64 KiB and the maximum) and by the direct memory in use: a
 * read takes at most a quarter of what is left of half the cap, and never less than {@link
 * #MIN_READ}. So many busy connections (nconnect, scale-up, a backlog on each) share the memory by
 * reading less instead of failing an allocation at the cap, and the other half stays for what TLS
 * allocates (records being encrypted or decrypted).
 *
 * <p>Large reads are the point: the kernel work of a loopback hop is mostly per call (waking the
 * reader, the TCP send path), so one read that takes everything that arrived while the last one was
 * relayed costs less CPU per byte than a read per 64 KiB segment. The buffers come from malloc
 * unzeroed (lib/proxy/jvm.options) and are freed once written.
 */
final class ReadAllocator implements RecvByteBufAllocator {

  /** The smallest read, whatever the budget. */
  static final int MIN_READ = 16 * 1024;

  private final AdaptiveRecvByteBufAllocator adaptive;
  private final LongSupplier used;
  private final long limit;

  /**
   * @param maxRead the largest read
   * @param used direct memory in use now (negative when unknown: no budget then)
   * @param limit the direct memory cap
   */
  ReadAllocator(int maxRead, LongSupplier used, long limit) {
    this.adaptive = new AdaptiveRecvByteBufAllocator(1024, 64 * 1024, maxRead);
    adaptive.maxMessagesPerRead(1);
    this.used = used;
    this.limit = limit;
  }

  /** The production allocator: Netty's own count of its direct memory against its cap. */
  static ReadAllocator standard(int maxRead) {
    return new ReadAllocator(
        maxRead, PlatformDependent::usedDirectMemory, PlatformDependent.maxDirectMemory());
  }

  /** The size of the next read for a guess from the adaptive sizing. */
  int size(int guess) {
    long inUse = used.getAsLong();
    if (inUse < 0) {
      return guess;
    }
    long quarterOfWhatIsLeft = (limit / 2 - inUse) / 4;
    return (int) Math.max(MIN_READ, Math.min(guess, quarterOfWhatIsLeft));
  }

  @Override
  public ExtendedHandle newHandle() {
    return new BudgetHandle((ExtendedHandle) adaptive.newHandle());
  }

  private final class BudgetHandle extends DelegatingHandle implements ExtendedHandle {

    BudgetHandle(ExtendedHandle delegate) {
      super(delegate);
    }

    @Override
    public ByteBuf allocate(ByteBufAllocator alloc) {
      return alloc.ioBuffer(size(guess()));
    }

    @Override
    public boolean continueReading(UncheckedBooleanSupplier maybeMoreDataSupplier) {
      return ((ExtendedHandle) delegate()).continueReading(maybeMoreDataSupplier);
    }
  }
}
