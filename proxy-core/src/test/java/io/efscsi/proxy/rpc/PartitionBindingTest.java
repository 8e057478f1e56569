package io.efscsi.proxy.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.proxy.config.ProxyConfig.BindProtocol;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class PartitionBindingTest {

  static final byte[] ID = new byte[16];

  static {
    Arrays.fill(ID, (byte) 0xab);
  }

  /** A reply body (no record mark) as an EFS server writes it. */
  static ByteBuf reply(int xid, int acceptStat, int kind, byte[] arm, int... scaleUp) {
    ByteBuf b = Unpooled.buffer();
    b.writeInt(xid).writeInt(1).writeInt(0); // REPLY, MSG_ACCEPTED
    b.writeInt(0).writeInt(0); // verifier AUTH_NONE
    b.writeInt(acceptStat);
    if (acceptStat != 0) {
      return b;
    }
    b.writeInt(kind);
    if (arm != null) {
      if (kind == 2 || kind == 3) {
        b.writeBytes(arm);
      } else {
        OncRpc.writeOpaque(b, arm);
      }
    }
    for (int v : scaleUp) {
      b.writeInt(v);
    }
    return b;
  }

  static byte[] partition(int fill) {
    byte[] p = new byte[64];
    Arrays.fill(p, (byte) fill);
    return p;
  }

  @Test
  void callIsOneRecordWithTheProxyIdentifier() {
    ByteBuf call =
        PartitionBinding.call(
            ByteBufAllocator.DEFAULT, BindProtocol.AWSFILE_V3, 7, ID, 0x0102030405060708L);
    assertEquals(0x8000_0000 | (call.readableBytes() - 4), call.readInt());
    assertEquals(7, call.readInt()); // xid
    assertEquals(0, call.readInt()); // CALL
    assertEquals(2, call.readInt()); // rpcvers
    assertEquals(400123, call.readInt());
    assertEquals(1, call.readInt());
    assertEquals(2, call.readInt());
    assertEquals(0, call.readLong()); // cred AUTH_NONE
    assertEquals(0, call.readLong()); // verf AUTH_NONE
    assertEquals(16, call.readInt());
    byte[] id = new byte[16];
    call.readBytes(id);
    assertArrayEquals(ID, id);
    assertEquals(8, call.readInt());
    assertEquals(0x0102030405060708L, call.readLong());
    assertEquals(0, call.readableBytes());
    call.release();

    ByteBuf v2 = PartitionBinding.call(ByteBufAllocator.DEFAULT, BindProtocol.EFS_V2, 7, ID, 1);
    assertEquals(100200, v2.getInt(16));
    assertEquals(1, v2.getInt(24));
    v2.release();
  }

  @Test
  void readyAndPreferredCarryThePartitionAndScaleUp() {
    var ready =
        assertInstanceOf(
            PartitionBinding.Reply.Bound.class,
            PartitionBinding.parse(
                reply(9, 0, 3, partition(7), 5, 314572800, 2, 3), 9, BindProtocol.AWSFILE_V3));
    assertTrue(ready.ready());
    assertArrayEquals(partition(7), ready.partitionId());
    assertEquals(new PartitionBinding.ScaleUp(5, 314572800, 2, 3), ready.scaleUp());

    var preferred =
        assertInstanceOf(
            PartitionBinding.Reply.Bound.class,
            PartitionBinding.parse(
                reply(9, 0, 2, partition(1), 3, 1000, 1), 9, BindProtocol.EFS_V2));
    assertEquals(false, preferred.ready());
    assertEquals(
        new PartitionBinding.ScaleUp(3, 1000, 1, 1), preferred.scaleUp(), "v2 has three ints");
  }

  @Test
  void retryRetryLaterAndErrorCarryTheirMessages() {
    byte[] msg = "busy".getBytes(StandardCharsets.UTF_8);
    var retry =
        assertInstanceOf(
            PartitionBinding.Reply.Retry.class,
            PartitionBinding.parse(reply(1, 0, 0, msg, 5, 1, 1, 1), 1, BindProtocol.AWSFILE_V3));
    assertEquals(false, retry.later());
    assertEquals("busy", retry.message());
    var later =
        assertInstanceOf(
            PartitionBinding.Reply.Retry.class,
            PartitionBinding.parse(reply(1, 0, 1, msg, 5, 1, 1, 1), 1, BindProtocol.AWSFILE_V3));
    assertTrue(later.later());
    var error =
        assertInstanceOf(
            PartitionBinding.Reply.Failed.class,
            PartitionBinding.parse(
                reply(1, 0, 4, "no such client".getBytes(StandardCharsets.UTF_8)),
                1,
                BindProtocol.AWSFILE_V3));
    assertEquals("no such client", error.message());
    assertEquals(PartitionBinding.ScaleUp.DEFAULT, error.scaleUp(), "no config sent: the defaults");
    var unknown =
        assertInstanceOf(
            PartitionBinding.Reply.Failed.class,
            PartitionBinding.parse(reply(1, 0, 9, null), 1, BindProtocol.AWSFILE_V3));
    assertTrue(unknown.message().contains("unknown bind response 9"));
  }

  @Test
  void aServerThatDoesNotKnowTheProgramMeansUnbound() {
    for (int stat :
        new int[] {
          OncRpc.PROG_UNAVAIL, OncRpc.PROC_UNAVAIL, OncRpc.PROG_MISMATCH, OncRpc.GARBAGE_ARGS
        }) {
      var r =
          assertInstanceOf(
              PartitionBinding.Reply.Unsupported.class,
              PartitionBinding.parse(reply(4, stat, 0, null), 4, BindProtocol.AWSFILE_V3));
      assertTrue(r.reason().contains(OncRpc.acceptStatusName(stat)));
    }
  }

  @Test
  void deniedWrongXidAndTruncatedRepliesAreErrors() {
    ByteBuf denied = Unpooled.buffer().writeInt(4).writeInt(1).writeInt(1).writeInt(1);
    assertThrows(
        OncRpc.RpcException.class,
        () -> PartitionBinding.parse(denied, 4, BindProtocol.AWSFILE_V3));
    assertThrows(
        OncRpc.RpcException.class,
        () -> PartitionBinding.parse(reply(5, 0, 3, partition(1)), 6, BindProtocol.AWSFILE_V3));
    ByteBuf truncated = reply(5, 0, 3, new byte[10]);
    assertThrows(
        OncRpc.RpcException.class,
        () -> PartitionBinding.parse(truncated, 5, BindProtocol.AWSFILE_V3));
  }
}
