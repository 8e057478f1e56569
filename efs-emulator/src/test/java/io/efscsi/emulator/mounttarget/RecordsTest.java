package io.efscsi.emulator.mounttarget;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RecordsTest {

  static final byte[] ROOT_FH = {1, 2, 3, 4, 5, 6, 7};

  /** An NFSv4 COMPOUND call as root (AUTH_SYS 0:0 with groups 0, 1) with the given ops. */
  static byte[] compound(int minor, byte[] ops, int numOps) {
    byte[] cred =
        new Xdr.Out().u32(7).string("client").u32(0).u32(0).u32(2).u32(0).u32(1).toBytes();
    return new Xdr.Out()
        .u32(42)
        .u32(0)
        .u32(2)
        .u32(100003)
        .u32(4)
        .u32(1)
        .u32(1)
        .opaque(cred)
        .u32(0)
        .u32(0)
        .string("")
        .u32(minor)
        .u32(numOps)
        .fixed(ops)
        .toBytes();
  }

  @Test
  void anAccessPointsUserReplacesTheCallersAndTheRootBecomesItsDirectory() {
    byte[] ops = new Xdr.Out().u32(24).u32(15).string("hello.txt").toBytes();
    Records.Rewritten r =
        Records.rewrite(
            compound(0, ops, 2),
            Optional.of(new Records.Identity(50000, 50001, List.of(7L))),
            ROOT_FH);
    assertTrue(r.rootMapped());
    ByteBuffer b = ByteBuffer.wrap(r.call());
    b.position(24);
    assertEquals(1, b.getInt()); // AUTH_SYS
    b.getInt(); // length
    assertEquals(7, b.getInt()); // stamp kept
    assertArrayEquals("client".getBytes(), Xdr.opaque(b));
    assertEquals(50000, b.getInt());
    assertEquals(50001, b.getInt());
    assertEquals(1, b.getInt());
    assertEquals(7, b.getInt());
    b.getInt(); // verifier
    Xdr.skipOpaque(b);
    Xdr.skipOpaque(b); // tag
    assertEquals(0, b.getInt());
    assertEquals(2, b.getInt());
    assertEquals(22, b.getInt()); // PUTFH
    assertArrayEquals(ROOT_FH, Xdr.opaque(b));
    assertEquals(15, b.getInt()); // LOOKUP follows untouched
    assertArrayEquals("hello.txt".getBytes(), Xdr.opaque(b));
    assertFalse(b.hasRemaining());
  }

  @Test
  void inNfs41TheRootAfterSequenceIsMappedAndWithoutAnAccessPointTheCallerStays() {
    byte[] ops = new Xdr.Out().u32(53).fixed(new byte[32]).u32(24).u32(10).toBytes();
    byte[] call = compound(1, ops, 3);
    Records.Rewritten r = Records.rewrite(call, Optional.empty(), ROOT_FH);
    assertTrue(r.rootMapped());
    assertEquals(call.length + 4 + 8, r.call().length); // PUTFH for PUTROOTFH, fh added
    assertArrayEquals(
        java.util.Arrays.copyOfRange(call, 0, 80), java.util.Arrays.copyOfRange(r.call(), 0, 80));
  }

  @Test
  void otherCallsPassUnchanged() {
    byte[] ops = new Xdr.Out().u32(22).opaque(new byte[] {9}).u32(25).toBytes();
    byte[] call = compound(0, ops, 2);
    Records.Rewritten r = Records.rewrite(call, Optional.empty(), ROOT_FH);
    assertFalse(r.rootMapped());
    assertArrayEquals(call, r.call());
  }

  @Test
  void bindCallsOfBothFlavoursAreAnsweredReadyAndNfsCallsAreNot() {
    for (int[] p : new int[][] {{400123, 2}, {100200, 1}}) {
      byte[] bind = new Xdr.Out().u32(9).u32(0).u32(2).u32(p[0]).u32(1).u32(p[1]).toBytes();
      ByteBuffer reply = ByteBuffer.wrap(Records.bindReply(bind, "p-fs").orElseThrow());
      assertEquals(9, reply.getInt());
      assertEquals(1, reply.getInt());
      reply.position(24);
      assertEquals(3, reply.getInt()); // READY
    }
    assertTrue(Records.bindReply(compound(0, new byte[0], 0), "p").isEmpty());
  }

  @Test
  void theReplyShowsTheOperationTheClientSent() {
    byte[] reply =
        new Xdr.Out()
            .u32(42)
            .u32(1)
            .u32(0)
            .u32(0)
            .u32(0)
            .u32(0)
            .u32(0)
            .string("")
            .u32(2)
            .u32(22)
            .u32(0)
            .u32(10)
            .u32(0)
            .toBytes();
    Records.restoreRootOp(reply);
    assertEquals(24, ByteBuffer.wrap(reply).getInt(36));
    assertEquals(42, Records.xid(reply));
  }

  @Test
  void modesAreSpelledAsLsDoes() {
    assertEquals("rwx------", MountTarget.rwx("700"));
    assertEquals("rwxr-x---", MountTarget.rwx("0750"));
  }
}
