package io.efscsi.emulator.mounttarget;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** The few XDR and RPC record-marking pieces the mount target and its NFS client need. */
final class Xdr {

  private Xdr() {}

  /** An XDR encoder. */
  static final class Out {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

    Out u32(long v) {
      bytes.write((int) (v >>> 24));
      bytes.write((int) (v >>> 16));
      bytes.write((int) (v >>> 8));
      bytes.write((int) v);
      return this;
    }

    Out u64(long v) {
      return u32(v >>> 32).u32(v);
    }

    Out fixed(byte[] b) {
      bytes.writeBytes(b);
      bytes.writeBytes(new byte[(4 - b.length % 4) % 4]);
      return this;
    }

    Out fixed(byte[] b, int from, int to) {
      return fixed(java.util.Arrays.copyOfRange(b, from, to));
    }

    Out opaque(byte[] b) {
      return u32(b.length).fixed(b);
    }

    Out string(String s) {
      return opaque(s.getBytes(StandardCharsets.UTF_8));
    }

    byte[] toBytes() {
      return bytes.toByteArray();
    }
  }

  /** Skips the padding after {@code length} opaque bytes. */
  static void skipOpaque(ByteBuffer b) {
    int len = b.getInt();
    b.position(b.position() + len + (4 - len % 4) % 4);
  }

  static byte[] opaque(ByteBuffer b) {
    byte[] out = new byte[b.getInt()];
    b.get(out);
    b.position(b.position() + (4 - out.length % 4) % 4);
    return out;
  }

  /** One whole record (fragments joined), or null at end of stream. */
  static byte[] readRecord(InputStream in) throws IOException {
    DataInputStream d = new DataInputStream(in);
    ByteArrayOutputStream record = new ByteArrayOutputStream();
    while (true) {
      int mark;
      try {
        mark = d.readInt();
      } catch (java.io.EOFException e) {
        return null;
      }
      byte[] fragment = new byte[mark & 0x7fff_ffff];
      d.readFully(fragment);
      record.writeBytes(fragment);
      if (mark < 0) {
        return record.toByteArray();
      }
    }
  }

  /** Writes {@code body} as one last fragment. */
  static void writeRecord(OutputStream out, byte[] body) throws IOException {
    byte[] mark = ByteBuffer.allocate(4).putInt(0x8000_0000 | body.length).array();
    out.write(mark);
    out.write(body);
    out.flush();
  }
}
