package io.efscsi.proxy.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import io.efscsi.proxy.config.ProxyConfig.BindProtocol;
import io.efscsi.proxy.rpc.PartitionBinding.Reply;
import io.efscsi.proxy.rpc.PartitionBinding.ScaleUp;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * What a mount target answers to BindClientToPartition:
 *
 * <ul>
 *   <li>any reply an EFS server can write (every arm, messages of any bytes, a verifier, the
 *       scale-up limits or none) is read as written, with efs-utils' defaults where it has none;
 *   <li>any bytes are a reply or an {@link OncRpc.RpcException} with a message (the proxy then
 *       closes that upstream connection), never another failure; a reply read satisfies what the
 *       proxy relies on (a 64-byte partition, at least one connection, an unsigned threshold) and,
 *       written again, is read as itself.
 * </ul>
 */
class PartitionBindingFuzzTest {

  private static final BindProtocol[] PROTOCOLS = {BindProtocol.EFS_V2, BindProtocol.AWSFILE_V3};

  // CI's budget is a count of inputs (about what 10 s of fuzzing ran alone on this kind
  // of machine), not a time: the tier runs beside the ITs on the CPU they leave idle, where a
  // time budget ran a sixth as many (docs/reliability.md, "Fuzzed parsers")
  @FuzzTest(maxDuration = "300s", maxExecutions = 450_000)
  void anyBindReplyIsReadAsWrittenOrIsAnRpcError(FuzzedDataProvider data) {
    BindProtocol p = data.pickValue(PROTOCOLS);
    int xid = data.consumeInt();
    int accept = data.consumeBoolean() ? 0 : data.consumeInt(0, 6);
    int kind = data.consumeBoolean() ? data.consumeInt(0, 4) : data.consumeInt();
    byte[] arm = data.consumeBytes(kind == 2 || kind == 3 ? 64 : data.consumeInt(0, 300));
    int[] scale = new int[data.consumeBoolean() ? 4 : data.consumeInt(0, 3)];
    for (int k = 0; k < scale.length; k++) {
      scale[k] = data.consumeInt();
    }
    byte[] verifier = data.consumeBytes(data.consumeInt(0, 400));
    if ((kind == 2 || kind == 3) && arm.length < 64) {
      arm = java.util.Arrays.copyOf(arm, 64);
    }
    Reply expected = expected(p, accept, kind, arm, scale);
    assertEquals(
        describe(expected),
        describe(read(write(xid, verifier, accept, kind, arm, scale), xid, p)),
        "a reply as the server wrote it");

    int rawXid = data.consumeInt();
    Reply r;
    try {
      r = read(Unpooled.wrappedBuffer(data.consumeRemainingAsBytes()), rawXid, p);
    } catch (OncRpc.RpcException e) {
      if (e.getMessage() == null || e.getMessage().isBlank()) {
        throw new AssertionError("an RPC error without a message", e);
      }
      return;
    }
    ScaleUp s = r.scaleUp();
    assertTrue(s.maxConnections() >= 1, "max connections " + s.maxConnections());
    assertTrue(s.bytesPerSecondThreshold() >= 0 && s.bytesPerSecondThreshold() < 1L << 32);
    assertTrue(p != BindProtocol.EFS_V2 || s.lookbackSeconds() == 1, "a v2 reply has no lookback");
    if (r instanceof Reply.Bound b) {
      assertEquals(64, b.partitionId().length);
    }
    if (!(r instanceof Reply.Unsupported)) {
      assertEquals(describe(r), describe(read(write(r, rawXid, p), rawXid, p)), "written again");
    }
  }

  private static Reply read(ByteBuf body, int xid, BindProtocol p) {
    try {
      return PartitionBinding.parse(body, xid, p);
    } finally {
      body.release();
    }
  }

  /** The reply body (no record mark) as RFC 5531 and EFS's bind response lay it out. */
  private static ByteBuf write(
      int xid, byte[] verifier, int accept, int kind, byte[] arm, int[] scale) {
    ByteBuf b = Unpooled.buffer();
    b.writeInt(xid).writeInt(OncRpc.REPLY).writeInt(OncRpc.MSG_ACCEPTED);
    b.writeInt(0);
    OncRpc.writeOpaque(b, verifier);
    b.writeInt(accept);
    if (accept != OncRpc.SUCCESS) {
      return b;
    }
    b.writeInt(kind);
    switch (kind) {
      case 0, 1, 4 -> OncRpc.writeOpaque(b, arm);
      case 2, 3 -> b.writeBytes(arm);
      default -> {} // an arm this proxy does not know: what follows is not read as a message
    }
    for (int v : scale) {
      b.writeInt(v);
    }
    return b;
  }

  private static ByteBuf write(Reply r, int xid, BindProtocol p) {
    ScaleUp s = r.scaleUp();
    int[] scale = {
      s.maxConnections(),
      (int) s.bytesPerSecondThreshold(),
      s.breachedSeconds(),
      s.lookbackSeconds()
    };
    if (p == BindProtocol.EFS_V2) {
      scale = java.util.Arrays.copyOf(scale, 3);
    }
    return switch (r) {
      case Reply.Retry x -> write(xid, new byte[0], 0, x.later() ? 1 : 0, utf8(x.message()), scale);
      case Reply.Bound x -> write(xid, new byte[0], 0, x.ready() ? 3 : 2, x.partitionId(), scale);
      case Reply.Failed x -> {
        int unknown = unknownKind(x.message());
        yield unknown < 0
            ? write(xid, new byte[0], 0, 4, utf8(x.message()), scale)
            : write(xid, new byte[0], 0, unknown, new byte[0], scale);
      }
      case Reply.Unsupported x -> throw new IllegalArgumentException(x.toString());
    };
  }

  /**
   * The kind in "unknown bind response N" as this proxy writes it (N in canonical form), or -1 when
   * the message is the server's own ("…response 0010" is a server's text, not kind 10).
   */
  private static int unknownKind(String message) {
    String prefix = "unknown bind response ";
    if (!message.startsWith(prefix)) {
      return -1;
    }
    String n = message.substring(prefix.length());
    try {
      int kind = Integer.parseInt(n);
      return Integer.toString(kind).equals(n) && (kind < 0 || kind > 4) ? kind : -1;
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static Reply expected(BindProtocol p, int accept, int kind, byte[] arm, int[] scale) {
    if (accept != OncRpc.SUCCESS) {
      return new Reply.Unsupported("server answered " + OncRpc.acceptStatusName(accept));
    }
    int ints = p == BindProtocol.EFS_V2 ? 3 : 4;
    ScaleUp s =
        scale.length < ints
            ? ScaleUp.DEFAULT
            : new ScaleUp(
                Math.max(1, scale[0]), scale[1] & 0xffff_ffffL, scale[2], ints == 4 ? scale[3] : 1);
    String message = new String(arm, StandardCharsets.UTF_8);
    return switch (kind) {
      case 0, 1 -> new Reply.Retry(kind == 1, message, s);
      case 2, 3 -> new Reply.Bound(kind == 3, arm, s);
      case 4 -> new Reply.Failed(message, s);
      default -> new Reply.Failed("unknown bind response " + kind, s);
    };
  }

  /** A reply as text (records holding arrays compare them by identity). */
  private static String describe(Reply r) {
    return r instanceof Reply.Bound b
        ? "Bound["
            + b.ready()
            + ", "
            + HexFormat.of().formatHex(b.partitionId())
            + ", "
            + r.scaleUp()
        : r.toString();
  }
}
