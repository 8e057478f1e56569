package io.efscsi.proxy.rpc;

import io.efscsi.proxy.config.ProxyConfig.BindProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.HexFormat;

/**
 * EFS's BindClientToPartition: the first RPC on every upstream connection. It tells the server
 * which client this connection belongs to (a per-process id plus the incarnation of the kernel
 * connection), and the server answers with the partition the connection is bound to and how far the
 * client may scale up. All connections of one kernel connection must land on one partition.
 */
public final class PartitionBinding {

  /** Program, version and procedure of each flavour. */
  public static int program(BindProtocol p) {
    return p == BindProtocol.EFS_V2 ? 100200 : 400123;
  }

  public static int procedure(BindProtocol p) {
    return p == BindProtocol.EFS_V2 ? 1 : 2;
  }

  /** What the server allows; efs-utils' defaults when the server sends none. */
  public record ScaleUp(
      int maxConnections, long bytesPerSecondThreshold, int breachedSeconds, int lookbackSeconds) {
    public static final ScaleUp DEFAULT = new ScaleUp(5, 300L * 1024 * 1024, 1, 1);
  }

  /** The outcome of one bind call. */
  public sealed interface Reply {
    ScaleUp scaleUp();

    /** READY or PREFERRED: bound to {@code partitionId}. */
    record Bound(boolean ready, byte[] partitionId, ScaleUp scaleUp) implements Reply {
      public String partitionHex() {
        return HexFormat.of().formatHex(partitionId);
      }
    }

    /** RETRY or RETRY_LATER with the server's message. */
    record Retry(boolean later, String message, ScaleUp scaleUp) implements Reply {}

    /** ERROR, or a union arm this proxy does not know. */
    record Failed(String message, ScaleUp scaleUp) implements Reply {}

    /** The server does not know the RPC (or rejected it): use the connection unbound. */
    record Unsupported(String reason) implements Reply {
      @Override
      public ScaleUp scaleUp() {
        return ScaleUp.DEFAULT;
      }
    }
  }

  private PartitionBinding() {}

  /** The call record: ProxyIdentifier { opaque identifier<16>; opaque incarnation<8>; }. */
  public static ByteBuf call(
      ByteBufAllocator alloc, BindProtocol p, int xid, byte[] identifier, long incarnation) {
    if (p == BindProtocol.NONE) {
      throw new IllegalArgumentException("no bind call for protocol NONE");
    }
    ByteBuf args = alloc.buffer(32);
    OncRpc.writeOpaque(args, identifier);
    byte[] inc = new byte[8];
    for (int i = 0; i < 8; i++) {
      inc[i] = (byte) (incarnation >>> (56 - 8 * i));
    }
    OncRpc.writeOpaque(args, inc);
    return OncRpc.call(alloc, xid, program(p), 1, procedure(p), args);
  }

  /** Parses a reply record body (mark removed). */
  public static Reply parse(ByteBuf body, int xid, BindProtocol p) {
    int accept = OncRpc.acceptedStatus(body, xid);
    if (accept != OncRpc.SUCCESS) {
      return new Reply.Unsupported("server answered " + OncRpc.acceptStatusName(accept));
    }
    OncRpc.need(body, 4, "bind response");
    int kind = body.readInt();
    Reply r =
        switch (kind) {
          case 0, 1 -> new Reply.Retry(kind == 1, OncRpc.readString(body, "retry message"), null);
          case 2, 3 ->
              new Reply.Bound(kind == 3, OncRpc.readFixedOpaque(body, 64, "partition id"), null);
          case 4 -> new Reply.Failed(OncRpc.readString(body, "error message"), null);
          default -> new Reply.Failed("unknown bind response " + kind, null);
        };
    ScaleUp s = scaleUp(body, p);
    return switch (r) {
      case Reply.Retry x -> new Reply.Retry(x.later(), x.message(), s);
      case Reply.Bound x -> new Reply.Bound(x.ready(), x.partitionId(), s);
      case Reply.Failed x -> new Reply.Failed(x.message(), s);
      case Reply.Unsupported x -> x;
    };
  }

  private static ScaleUp scaleUp(ByteBuf body, BindProtocol p) {
    int ints = p == BindProtocol.EFS_V2 ? 3 : 4;
    if (body.readableBytes() < 4 * ints) {
      return ScaleUp.DEFAULT;
    }
    int max = body.readInt();
    long threshold = Integer.toUnsignedLong(body.readInt());
    int breached = body.readInt();
    int lookback = ints == 4 ? body.readInt() : 1;
    if (max < 1) {
      max = 1;
    }
    return new ScaleUp(max, threshold, breached, lookback);
  }
}
