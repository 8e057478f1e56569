package io.efscsi.emulator.mounttarget;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * What the mount target does to the RPC records of a connection: answers BindClientToPartition
 * (awsfile-v3: program 400123 procedure 2; efs-v2: 100200 procedure 1) with READY, and on NFS calls
 * applies the access point's POSIX identity to AUTH_SYS credentials (user, group and secondary
 * groups replaced, as EFS does) and maps the root file handle to the connection's root (the access
 * point's directory, or the file system's root).
 */
final class Records {

  static final int AWSFILE = 400123;
  static final int EFS_V2 = 100200;
  private static final int AUTH_SYS = 1;
  private static final int OP_SEQUENCE = 53;

  /** The user an access point enforces. */
  record Identity(long uid, long gid, List<Long> secondaryGids) {}

  private Records() {}

  /** The reply to a bind call: READY on {@code partition}, one connection; empty otherwise. */
  static Optional<byte[]> bindReply(byte[] call, String partition) {
    ByteBuffer r = ByteBuffer.wrap(call);
    if (call.length < 24 || r.getInt(4) != 0) {
      return Optional.empty();
    }
    int program = r.getInt(12);
    int procedure = r.getInt(20);
    boolean awsfile = program == AWSFILE && procedure == 2;
    if (!awsfile && !(program == EFS_V2 && procedure == 1)) {
      return Optional.empty();
    }
    byte[] id = Arrays.copyOf(partition.getBytes(StandardCharsets.US_ASCII), 64);
    Xdr.Out out =
        new Xdr.Out()
            .u32(r.getInt(0))
            .u32(1) // REPLY
            .u32(0) // MSG_ACCEPTED
            .u32(0)
            .u32(0) // verifier AUTH_NONE
            .u32(0) // SUCCESS
            .u32(3) // READY
            .fixed(id)
            .u32(1) // max connections
            .u32(300 << 20) // scale-up threshold, bytes per second
            .u32(1); // seconds above it
    if (awsfile) {
      out.u32(1); // lookback window, seconds
    }
    return Optional.of(out.toBytes());
  }

  /** A call as ganesha gets it; {@code rootMapped} when its PUTROOTFH became a PUTFH. */
  record Rewritten(byte[] call, boolean rootMapped) {}

  /** The call as ganesha gets it; unchanged when it is no NFS call this rewrites. */
  static Rewritten rewrite(byte[] call, Optional<Identity> identity, byte[] rootFh) {
    ByteBuffer r = ByteBuffer.wrap(call);
    if (call.length < 32 || r.getInt(4) != 0) {
      return new Rewritten(call, false);
    }
    int program = r.getInt(12);
    int procedure = r.getInt(20);
    byte[] head = Arrays.copyOfRange(call, 0, 24);
    r.position(24);
    int flavor = r.getInt();
    int credStart = 24;
    Xdr.skipOpaque(r);
    int credEnd = r.position();
    byte[] cred = Arrays.copyOfRange(call, credStart, credEnd);
    if (flavor == AUTH_SYS && identity.isPresent()) {
      ByteBuffer c = ByteBuffer.wrap(cred, 8, cred.length - 8);
      int stamp = c.getInt();
      byte[] machine = Xdr.opaque(c);
      Identity id = identity.get();
      Xdr.Out body = new Xdr.Out().u32(stamp).opaque(machine).u32(id.uid()).u32(id.gid());
      body.u32(id.secondaryGids().size());
      id.secondaryGids().forEach(body::u32);
      cred = new Xdr.Out().u32(AUTH_SYS).opaque(body.toBytes()).toBytes();
    }
    r.getInt(); // verifier flavour
    Xdr.skipOpaque(r);
    int argsStart = r.position();
    byte[] args = Arrays.copyOfRange(call, argsStart, call.length);
    boolean mapped = false;
    if (program == Nfs4Client.NFS_PROGRAM && procedure == 1) {
      byte[] before = args;
      args = mapRoot(args, rootFh);
      mapped = args != before;
    }
    Xdr.Out out = new Xdr.Out().fixed(head).fixed(cred).fixed(call, credEnd, argsStart);
    return new Rewritten(out.fixed(args).toBytes(), mapped);
  }

  /** The xid of a record. */
  static int xid(byte[] record) {
    return record.length < 4 ? -1 : ByteBuffer.wrap(record).getInt(0);
  }

  /**
   * In the reply to a call whose PUTROOTFH was mapped, the PUTFH result renamed back to PUTROOTFH
   * (in place: both have no result body), so the client sees the operation it sent.
   */
  static void restoreRootOp(byte[] reply) {
    try {
      ByteBuffer r = ByteBuffer.wrap(reply);
      r.position(12); // xid, REPLY, MSG_ACCEPTED
      r.getInt(); // verifier flavour
      Xdr.skipOpaque(r);
      if (r.getInt() != 0) {
        return;
      }
      r.getInt(); // compound status
      Xdr.skipOpaque(r); // tag
      if (r.getInt() == 0) {
        return;
      }
      int at = r.position();
      if (r.getInt() == OP_SEQUENCE) {
        if (r.getInt() != 0) {
          return;
        }
        at = r.position() + 36; // sessionid, sequenceid, slotid, highest, target highest, flags
      }
      if (r.getInt(at) == Nfs4Client.OP_PUTFH) {
        r.putInt(at, Nfs4Client.OP_PUTROOTFH);
      }
    } catch (RuntimeException malformed) {
      // not a reply this understands: passed on as it is
    }
  }

  /** COMPOUND arguments with a leading PUTROOTFH (after SEQUENCE in 4.1) turned into PUTFH. */
  private static byte[] mapRoot(byte[] args, byte[] rootFh) {
    ByteBuffer a = ByteBuffer.wrap(args);
    Xdr.skipOpaque(a); // tag
    a.getInt(); // minor version
    if (a.getInt() == 0) {
      return args;
    }
    int at = a.position();
    if (a.getInt() == OP_SEQUENCE) {
      at = a.position() + 32; // sessionid, sequenceid, slotid, highest slotid, cachethis
      a.position(at);
      if (!a.hasRemaining()) {
        return args;
      }
      a.getInt();
    }
    if (a.getInt(at) != Nfs4Client.OP_PUTROOTFH) {
      return args;
    }
    return new Xdr.Out()
        .fixed(Arrays.copyOfRange(args, 0, at))
        .u32(Nfs4Client.OP_PUTFH)
        .opaque(rootFh)
        .fixed(Arrays.copyOfRange(args, at + 4, args.length))
        .toBytes();
  }
}
