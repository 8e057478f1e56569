package io.efscsi.common.x509;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;

/**
 * The DER encodings (ITU-T X.690) a certificate needs, each returning one whole element: tag,
 * length, contents. Only definite lengths and the universal and context-specific tags used in X.509
 * (RFC 5280); nothing here parses beyond {@link #contents}, which reads one element back.
 */
public final class Der {

  private static final int SEQUENCE = 0x30;
  private static final int SET = 0x31;
  private static final int BOOLEAN = 0x01;
  private static final int INTEGER = 0x02;
  private static final int BIT_STRING = 0x03;
  private static final int OCTET_STRING = 0x04;
  private static final int NULL = 0x05;
  private static final int OID = 0x06;
  private static final int UTF8_STRING = 0x0c;
  private static final int UTC_TIME = 0x17;
  private static final int GENERALIZED_TIME = 0x18;

  private static final DateTimeFormatter UTC =
      DateTimeFormatter.ofPattern("yyMMddHHmmss'Z'").withZone(ZoneOffset.UTC);
  private static final DateTimeFormatter GENERALIZED =
      DateTimeFormatter.ofPattern("yyyyMMddHHmmss'Z'").withZone(ZoneOffset.UTC);

  /** 2050-01-01T00:00:00Z: from here on RFC 5280 times are GeneralizedTime. */
  private static final Instant UTC_TIME_END = Instant.parse("2050-01-01T00:00:00Z");

  /** 1950-01-01T00:00:00Z: before it, too. */
  private static final Instant UTC_TIME_START = Instant.parse("1950-01-01T00:00:00Z");

  private Der() {}

  /** SEQUENCE of the given elements, in order. */
  public static byte[] sequence(byte[]... elements) {
    return element(SEQUENCE, concat(elements));
  }

  /** SET of one or more elements (a certificate's names use one element per set). */
  public static byte[] set(byte[]... elements) {
    return element(SET, concat(elements));
  }

  public static byte[] bool(boolean value) {
    return element(BOOLEAN, new byte[] {(byte) (value ? 0xff : 0x00)});
  }

  /** INTEGER in two's complement, in as few octets as it takes. */
  public static byte[] integer(BigInteger value) {
    return element(INTEGER, value.toByteArray());
  }

  /** BIT STRING of whole octets (no unused bits), as a signature or a public key. */
  public static byte[] bitString(byte[] octets) {
    byte[] content = new byte[octets.length + 1];
    System.arraycopy(octets, 0, content, 1, octets.length);
    return element(BIT_STRING, content);
  }

  /**
   * BIT STRING of named bits ({@code bits}' bit 0 is the first named bit), trailing zero bits
   * removed as DER requires: a key usage.
   */
  public static byte[] namedBits(int bits) {
    if (bits == 0) {
      return element(BIT_STRING, new byte[] {0});
    }
    int highest = 31 - Integer.numberOfLeadingZeros(bits); // the last named bit set
    int octets = highest / 8 + 1;
    byte[] content = new byte[octets + 1];
    for (int bit = 0; bit <= highest; bit++) {
      if ((bits & (1 << bit)) != 0) {
        content[1 + bit / 8] |= (byte) (0x80 >>> (bit % 8));
      }
    }
    content[0] = (byte) (octets * 8 - 1 - highest);
    return element(BIT_STRING, content);
  }

  public static byte[] octetString(byte[] octets) {
    return element(OCTET_STRING, octets);
  }

  public static byte[] nul() {
    return element(NULL, new byte[0]);
  }

  /** OBJECT IDENTIFIER from its dotted form, e.g. {@code 2.5.4.3}. */
  public static byte[] oid(String dotted) {
    String[] parts = dotted.split("\\.");
    if (parts.length < 2) {
      throw new IllegalArgumentException("not an object identifier: '" + dotted + "'");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    BigInteger first = new BigInteger(parts[0]).multiply(BigInteger.valueOf(40));
    base128(out, first.add(new BigInteger(parts[1])));
    for (int i = 2; i < parts.length; i++) {
      base128(out, new BigInteger(parts[i]));
    }
    return element(OID, out.toByteArray());
  }

  public static byte[] utf8(String s) {
    return element(UTF8_STRING, s.getBytes(StandardCharsets.UTF_8));
  }

  /** UTCTime {@code YYMMDDHHMMSSZ}, whole seconds (a fraction is dropped). */
  public static byte[] utcTime(Instant t) {
    return element(UTC_TIME, UTC.format(t).getBytes(StandardCharsets.US_ASCII));
  }

  /**
   * A certificate's validity time as RFC 5280 4.1.2.5 has it: UTCTime from 1950 to 2049,
   * GeneralizedTime otherwise, whole seconds.
   */
  public static byte[] time(Instant t) {
    if (!t.isBefore(UTC_TIME_START) && t.isBefore(UTC_TIME_END)) {
      return utcTime(t);
    }
    return element(GENERALIZED_TIME, GENERALIZED.format(t).getBytes(StandardCharsets.US_ASCII));
  }

  /** {@code [tag] EXPLICIT}: the element wrapped in a constructed context-specific tag. */
  public static byte[] explicit(int tag, byte[] element) {
    return element(0xa0 | checkTag(tag), element);
  }

  /** {@code [tag] IMPLICIT} of a primitive type: its contents under a context-specific tag. */
  public static byte[] implicitPrimitive(int tag, byte[] contents) {
    return element(0x80 | checkTag(tag), contents);
  }

  /**
   * The contents of the element at the start of {@code der} (after its tag and length), which must
   * have the tag {@code tag}; the rest of {@code der} is ignored.
   */
  public static byte[] contents(byte[] der, int tag) {
    if (der.length < 2 || (der[0] & 0xff) != tag) {
      throw new IllegalArgumentException(
          "expected DER tag 0x" + Integer.toHexString(tag) + ", got " + describe(der));
    }
    int length = der[1] & 0xff;
    int offset = 2;
    if (length > 0x7f) {
      int n = length & 0x7f;
      if (n == 0 || n > 4 || der.length < 2 + n) {
        throw new IllegalArgumentException("bad DER length in " + describe(der));
      }
      length = 0;
      for (int i = 0; i < n; i++) {
        length = (length << 8) | (der[2 + i] & 0xff);
      }
      offset += n;
    }
    if (length < 0 || offset + length > der.length) {
      throw new IllegalArgumentException("DER element longer than its input: " + describe(der));
    }
    return Arrays.copyOfRange(der, offset, offset + length);
  }

  /** The length of the whole element (tag, length and contents) at the start of {@code der}. */
  public static int length(byte[] der) {
    int length = der[1] & 0xff;
    if (length <= 0x7f) {
      return 2 + length;
    }
    int n = length & 0x7f;
    int contents = 0;
    for (int i = 0; i < n; i++) {
      contents = (contents << 8) | (der[2 + i] & 0xff);
    }
    return 2 + n + contents;
  }

  /** Tag {@code tag}, the length of {@code contents} in DER form, then the contents. */
  static byte[] element(int tag, byte[] contents) {
    int n = contents.length;
    byte[] length;
    if (n < 0x80) {
      length = new byte[] {(byte) n};
    } else {
      int octets = (32 - Integer.numberOfLeadingZeros(n) + 7) / 8;
      length = new byte[octets + 1];
      length[0] = (byte) (0x80 | octets);
      for (int i = 0; i < octets; i++) {
        length[octets - i] = (byte) (n >>> (8 * i));
      }
    }
    byte[] out = new byte[1 + length.length + n];
    out[0] = (byte) tag;
    System.arraycopy(length, 0, out, 1, length.length);
    System.arraycopy(contents, 0, out, 1 + length.length, n);
    return out;
  }

  private static byte[] concat(byte[]... parts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] p : parts) {
      out.writeBytes(p);
    }
    return out.toByteArray();
  }

  private static void base128(ByteArrayOutputStream out, BigInteger v) {
    if (v.signum() < 0) {
      throw new IllegalArgumentException("negative object identifier arc: " + v);
    }
    int groups = Math.max(1, (v.bitLength() + 6) / 7);
    for (int i = groups - 1; i >= 0; i--) {
      int b = v.shiftRight(7 * i).intValue() & 0x7f;
      out.write(i > 0 ? b | 0x80 : b);
    }
  }

  private static int checkTag(int tag) {
    if (tag < 0 || tag > 30) {
      throw new IllegalArgumentException("context tag out of range: " + tag);
    }
    return tag;
  }

  private static String describe(byte[] der) {
    return der.length == 0
        ? "nothing"
        : "tag 0x" + Integer.toHexString(der[0] & 0xff) + " (" + der.length + " bytes)";
  }
}
