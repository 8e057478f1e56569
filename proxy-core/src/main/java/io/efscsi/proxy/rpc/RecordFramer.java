package io.efscsi.proxy.rpc;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/**
 * Cuts a byte stream of ONC RPC records (RFC 5531 record marking) into {@link RecordChunk}s without
 * copying or buffering: each chunk is a slice of what was read and belongs to exactly one record,
 * so a record can be steered to one upstream connection while it streams through. A fragment longer
 * than {@link #MAX_FRAGMENT} (1 MiB + 4 KiB, the Linux sunrpc maximum) is a protocol error.
 */
public final class RecordFramer extends ChannelInboundHandlerAdapter {

  /** The largest fragment the kernel sends: 1 MiB of payload plus 4 KiB of headers. */
  public static final int MAX_FRAGMENT = 1024 * 1024 + 4096;

  /** Thrown (and fired as an exception) for a fragment that breaks the limits. */
  public static final class FrameException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    FrameException(String message) {
      super(message);
    }
  }

  private final String side;
  private int headerBytes;
  private int header;
  private int remaining;
  private boolean lastFragment;
  private boolean inRecord;
  private long records;
  private boolean failed;

  /**
   * @param side names the direction in errors, e.g. "client" or "server"
   */
  public RecordFramer(String side) {
    this.side = side;
  }

  /** Complete records seen so far. */
  public long records() {
    return records;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof ByteBuf buf)) {
      ctx.fireChannelRead(msg);
      return;
    }
    if (failed) {
      buf.release();
      return;
    }
    try {
      split(ctx, buf);
    } catch (FrameException e) {
      failed = true;
      ctx.fireExceptionCaught(e);
    } finally {
      buf.release();
    }
  }

  private void split(ChannelHandlerContext ctx, ByteBuf buf) {
    int chunkStart = buf.readerIndex();
    boolean chunkIsStart = !inRecord;
    while (buf.isReadable()) {
      if (!inRecord) {
        inRecord = true;
        chunkIsStart = true;
      }
      if (remaining == 0 && headerBytes < 4) {
        while (headerBytes < 4 && buf.isReadable()) {
          header = (header << 8) | buf.readUnsignedByte();
          headerBytes++;
        }
        if (headerBytes < 4) {
          break;
        }
        lastFragment = (header & 0x8000_0000) != 0;
        int length = header & 0x7fff_ffff;
        if (length > MAX_FRAGMENT) {
          throw new FrameException(
              side
                  + " sent a record fragment of "
                  + length
                  + " bytes, over the limit of "
                  + MAX_FRAGMENT);
        }
        remaining = length;
      }
      int take = Math.min(remaining, buf.readableBytes());
      buf.skipBytes(take);
      remaining -= take;
      if (remaining == 0) {
        headerBytes = 0;
        header = 0;
        if (lastFragment) {
          inRecord = false;
          records++;
          emit(ctx, buf, chunkStart, buf.readerIndex(), chunkIsStart, true);
          chunkStart = buf.readerIndex();
          chunkIsStart = true;
        }
      }
    }
    if (buf.readerIndex() > chunkStart) {
      emit(ctx, buf, chunkStart, buf.readerIndex(), chunkIsStart, false);
    }
  }

  private static void emit(
      ChannelHandlerContext ctx, ByteBuf buf, int from, int to, boolean start, boolean end) {
    ctx.fireChannelRead(new RecordChunk(buf.retainedSlice(from, to - from), start, end));
  }
}
