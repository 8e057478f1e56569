package io.efscsi.proxy.rpc;

import io.netty.buffer.ByteBuf;

/**
 * How many of the calls one kernel connection sent upstream still wait for their reply, so that a
 * draining proxy knows when every reply still due has reached the kernel. Each record's message
 * type sits at a fixed offset (RFC 5531: the 4-byte record mark, the xid, then {@code msg_type}, 0
 * CALL or 1 REPLY, at bytes 8-11 of the record); calls are counted in the kernel's stream, replies
 * in what is relayed back to it. Calls from the server (NFSv4.1 callbacks) and the kernel's replies
 * to them are counted on neither side. A record whose first fragment is shorter than the xid and
 * the type is counted as neither. A record counts when its last chunk has passed, so a call cut off
 * halfway is not waited for. Confined to the session's event loop.
 */
public final class OutstandingCalls {

  private final RecordType fromKernel = new RecordType();
  private final RecordType toKernel = new RecordType();
  private long calls;
  private long replies;

  /** A chunk of the kernel's stream, as it is passed upstream; call before the write. */
  public void sent(RecordChunk chunk) {
    if (fromKernel.see(chunk) == OncRpc.CALL) {
      calls++;
    }
  }

  /** A chunk of the upstream's stream, as it is written to the kernel; call before the write. */
  public void relayed(RecordChunk chunk) {
    if (toKernel.see(chunk) == OncRpc.REPLY) {
      replies++;
    }
  }

  /** Calls passed upstream whose replies have not been written to the kernel yet. */
  public long outstanding() {
    return Math.max(0, calls - replies);
  }

  public long calls() {
    return calls;
  }

  public long replies() {
    return replies;
  }

  /** The message type of the records of one stream, read across however the stream was cut. */
  private static final class RecordType {
    private static final int HEADER = 12;
    private int seen;
    private int mark;
    private int type;

    /** The type of the record {@code chunk} ends (0 CALL, 1 REPLY, ...), else -1. */
    int see(RecordChunk chunk) {
      if (chunk.start()) {
        seen = 0;
        mark = 0;
        type = 0;
      }
      ByteBuf b = chunk.content();
      for (int i = b.readerIndex(); i < b.writerIndex() && seen < HEADER; i++, seen++) {
        int v = b.getUnsignedByte(i);
        if (seen < 4) {
          mark = (mark << 8) | v;
        } else if (seen >= 8) {
          type = (type << 8) | v;
        }
      }
      if (!chunk.end()) {
        return -1;
      }
      boolean known = seen == HEADER && (mark & 0x7fff_ffff) >= 8;
      return known ? type : -1;
    }
  }
}
