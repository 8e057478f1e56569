package io.efscsi.proxy.rpc;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/** The small part of ONC RPC v2 (RFC 5531) and XDR (RFC 4506) the proxy speaks itself. */
public final class OncRpc {

  public static final int CALL = 0;
  public static final int REPLY = 1;
  public static final int MSG_ACCEPTED = 0;
  public static final int MSG_DENIED = 1;
  public static final int SUCCESS = 0;
  public static final int PROG_UNAVAIL = 1;
  public static final int PROG_MISMATCH = 2;
  public static final int PROC_UNAVAIL = 3;
  public static final int GARBAGE_ARGS = 4;
  public static final int SYSTEM_ERR = 5;

  /** NFS program number, for the NULL ping. */
  public static final int NFS_PROGRAM = 100003;

  private OncRpc() {}

  /** A protocol violation in a reply. */
  public static final class RpcException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public RpcException(String message) {
      super(message);
    }
  }

  /** Writes a one-fragment record: mark, call header with AUTH_NONE, then {@code args}. */
  public static ByteBuf call(
      ByteBufAllocator alloc, int xid, int program, int version, int procedure, ByteBuf args) {
    int bodyLength = 40 + args.readableBytes();
    ByteBuf out = alloc.buffer(4 + bodyLength);
    out.writeInt(0x8000_0000 | bodyLength);
    out.writeInt(xid);
    out.writeInt(CALL);
    out.writeInt(2);
    out.writeInt(program);
    out.writeInt(version);
    out.writeInt(procedure);
    out.writeInt(0).writeInt(0); // cred AUTH_NONE
    out.writeInt(0).writeInt(0); // verf AUTH_NONE
    out.writeBytes(args);
    args.release();
    return out;
  }

  /**
   * Reads a reply header from {@code body} (the record without its mark) up to the results.
   *
   * @return the accept status (SUCCESS means the results follow in {@code body})
   * @throws RpcException if this is not a reply to {@code xid}, or it was denied
   */
  public static int acceptedStatus(ByteBuf body, int xid) {
    need(body, 12, "reply header");
    int gotXid = body.readInt();
    if (gotXid != xid) {
      throw new RpcException(
          "reply xid "
              + Integer.toUnsignedString(gotXid)
              + " does not match call xid "
              + Integer.toUnsignedString(xid));
    }
    int type = body.readInt();
    if (type != REPLY) {
      throw new RpcException("expected a reply, got message type " + type);
    }
    int stat = body.readInt();
    if (stat == MSG_DENIED) {
      need(body, 4, "rejected reply");
      int reason = body.readInt();
      throw new RpcException(
          reason == 0
              ? "call rejected: RPC version mismatch"
              : "call rejected: authentication error");
    }
    if (stat != MSG_ACCEPTED) {
      throw new RpcException("unknown reply status " + stat);
    }
    need(body, 8, "verifier");
    body.readInt(); // verifier flavor
    skipOpaque(body, "verifier body");
    need(body, 4, "accept status");
    return body.readInt();
  }

  public static String acceptStatusName(int s) {
    return switch (s) {
      case SUCCESS -> "SUCCESS";
      case PROG_UNAVAIL -> "PROG_UNAVAIL";
      case PROG_MISMATCH -> "PROG_MISMATCH";
      case PROC_UNAVAIL -> "PROC_UNAVAIL";
      case GARBAGE_ARGS -> "GARBAGE_ARGS";
      case SYSTEM_ERR -> "SYSTEM_ERR";
      default -> "accept status " + s;
    };
  }

  /** Variable-length opaque: length, bytes, padding to 4. */
  public static void writeOpaque(ByteBuf out, byte[] data) {
    out.writeInt(data.length);
    out.writeBytes(data);
    out.writeZero((4 - data.length % 4) % 4);
  }

  public static byte[] readFixedOpaque(ByteBuf in, int length, String what) {
    int padded = length + (4 - length % 4) % 4;
    need(in, padded, what);
    byte[] b = new byte[length];
    in.readBytes(b);
    in.skipBytes(padded - length);
    return b;
  }

  public static String readString(ByteBuf in, String what) {
    need(in, 4, what);
    int length = in.readInt();
    if (length < 0 || length > 65536) {
      throw new RpcException(what + " has a bad length " + length);
    }
    return new String(readFixedOpaque(in, length, what), StandardCharsets.UTF_8);
  }

  static void skipOpaque(ByteBuf in, String what) {
    need(in, 4, what);
    int length = in.readInt();
    if (length < 0 || length > 400) {
      throw new RpcException(what + " has a bad length " + length);
    }
    readFixedOpaque(in, length, what);
  }

  static void need(ByteBuf in, int n, String what) {
    if (in.readableBytes() < n) {
      throw new RpcException("reply too short for " + what);
    }
  }
}
