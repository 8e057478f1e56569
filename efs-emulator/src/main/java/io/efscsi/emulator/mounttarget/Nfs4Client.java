package io.efscsi.emulator.mounttarget;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * A minimal NFSv4.0 client over one TCP connection (AUTH_SYS): looks up a path to its file handle
 * and reads with the anonymous stateid, which needs no client id or open. The mount target uses it
 * to find an access point's root; the demo reads through a proxy with it, because libnfs's tools
 * give up when their connection drops and a kernel client on a hard mount does not.
 */
public final class Nfs4Client implements AutoCloseable {

  static final int NFS_PROGRAM = 100003;
  static final int OP_GETFH = 10;
  static final int OP_LOOKUP = 15;
  static final int OP_PUTFH = 22;
  static final int OP_PUTROOTFH = 24;
  static final int OP_READ = 25;

  /** An NFS error status of one operation. */
  public static final class NfsException extends IOException {
    public NfsException(int op, int status) {
      super("NFSv4 operation " + op + " failed with status " + status);
    }
  }

  /** What one READ returned. */
  public record Read(byte[] data, boolean eof) {}

  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;
  private final long uid;
  private final long gid;
  private int xid = (int) (System.nanoTime() & 0x3fff_ffff);

  private Nfs4Client(Socket socket, long uid, long gid) throws IOException {
    this.socket = socket;
    this.in = new BufferedInputStream(socket.getInputStream(), 1 << 20);
    this.out = new BufferedOutputStream(socket.getOutputStream(), 1 << 16);
    this.uid = uid;
    this.gid = gid;
  }

  /** Connects to an NFSv4 server (or a proxy in front of one) as {@code uid}:{@code gid}. */
  public static Nfs4Client connect(String host, int port, long uid, long gid) throws IOException {
    Socket s = new Socket();
    try {
      s.connect(new InetSocketAddress(host, port), 5_000);
      s.setSoTimeout(30_000);
      s.setTcpNoDelay(true);
      return new Nfs4Client(s, uid, gid);
    } catch (IOException e) {
      s.close();
      throw e;
    }
  }

  /** The file handle of {@code path} (components below the server's root). */
  public byte[] lookup(List<String> path) throws IOException {
    Xdr.Out ops = new Xdr.Out().u32(OP_PUTROOTFH);
    for (String component : path) {
      ops.u32(OP_LOOKUP).string(component);
    }
    ops.u32(OP_GETFH);
    ByteBuffer r = compound(path.size() + 2, ops.toBytes());
    // a mount target maps the root to an access point's with PUTFH; it answers as PUTROOTFH
    expect(r, OP_PUTROOTFH);
    for (int i = 0; i < path.size(); i++) {
      expect(r, OP_LOOKUP);
    }
    expect(r, OP_GETFH);
    return Xdr.opaque(r);
  }

  /** Up to {@code count} bytes of the file {@code fh} from {@code offset}. */
  public Read read(byte[] fh, long offset, int count) throws IOException {
    Xdr.Out ops =
        new Xdr.Out()
            .u32(OP_PUTFH)
            .opaque(fh)
            .u32(OP_READ)
            .u32(0) // anonymous stateid: seqid 0, other all zeros
            .fixed(new byte[12])
            .u64(offset)
            .u32(count);
    ByteBuffer r = compound(2, ops.toBytes());
    expect(r, OP_PUTFH);
    expect(r, OP_READ);
    boolean eof = r.getInt() != 0;
    return new Read(Xdr.opaque(r), eof);
  }

  private ByteBuffer compound(int numOps, byte[] ops) throws IOException {
    int id = ++xid;
    byte[] cred =
        new Xdr.Out().u32(0).string("efs-csi").u32(uid).u32(gid).u32(0).toBytes(); // no aux gids
    byte[] call =
        new Xdr.Out()
            .u32(id)
            .u32(0) // CALL
            .u32(2)
            .u32(NFS_PROGRAM)
            .u32(4)
            .u32(1) // COMPOUND
            .u32(1) // AUTH_SYS
            .opaque(cred)
            .u32(0) // verifier AUTH_NONE
            .u32(0)
            .string("") // tag
            .u32(0) // minor version 0
            .u32(numOps)
            .fixed(ops)
            .toBytes();
    Xdr.writeRecord(out, call);
    while (true) {
      byte[] reply = Xdr.readRecord(in);
      if (reply == null) {
        throw new IOException("the NFS server closed the connection");
      }
      ByteBuffer r = ByteBuffer.wrap(reply);
      if (r.getInt() != id) {
        continue; // a late reply to an abandoned call
      }
      if (r.getInt() != 1 || r.getInt() != 0) {
        throw new IOException("the NFS server denied the call");
      }
      r.getInt(); // verifier flavour
      Xdr.skipOpaque(r);
      int accept = r.getInt();
      if (accept != 0) {
        throw new IOException(
            "the NFS server did not accept the call (accept_stat " + accept + ")");
      }
      r.getInt(); // compound status: the failing operation's own status follows
      Xdr.skipOpaque(r); // tag
      r.getInt(); // number of results
      return r;
    }
  }

  private static void expect(ByteBuffer r, int op) throws IOException {
    if (!r.hasRemaining()) {
      throw new NfsException(op, -1);
    }
    int got = r.getInt();
    int status = r.getInt();
    if (got != op || status != 0) {
      throw new NfsException(got, status);
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
