package io.efscsi.proxy.rpc;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;

/**
 * A run of bytes of one ONC RPC record as it arrived, record marks included, so that what is
 * written on the other side is byte-for-byte what was read. {@code start} is true when the chunk
 * holds the record's first byte, {@code end} when it holds its last.
 */
public final class RecordChunk extends DefaultByteBufHolder {

  private final boolean start;
  private final boolean end;

  public RecordChunk(ByteBuf data, boolean start, boolean end) {
    super(data);
    this.start = start;
    this.end = end;
  }

  public boolean start() {
    return start;
  }

  public boolean end() {
    return end;
  }

  @Override
  public String toString() {
    return "RecordChunk("
        + content().readableBytes()
        + " bytes, start="
        + start
        + ", end="
        + end
        + ")";
  }
}
