package io.efscsi.common.x509;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.ASN1Boolean;
import org.bouncycastle.asn1.ASN1Integer;
import org.bouncycastle.asn1.ASN1ObjectIdentifier;
import org.bouncycastle.asn1.DERBitString;
import org.bouncycastle.asn1.DERNull;
import org.bouncycastle.asn1.DEROctetString;
import org.bouncycastle.asn1.DERSequence;
import org.bouncycastle.asn1.DERSet;
import org.bouncycastle.asn1.DERTaggedObject;
import org.bouncycastle.asn1.DERUTF8String;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.asn1.x509.Time;
import org.junit.jupiter.api.Test;

/** Every encoding against BouncyCastle's for the same value: the bytes must be the same. */
class DerTest {

  @Test
  void integersAreTwosComplementInTheFewestOctets() throws Exception {
    for (BigInteger v :
        List.of(
            BigInteger.ZERO,
            BigInteger.ONE,
            BigInteger.valueOf(127),
            BigInteger.valueOf(128),
            BigInteger.valueOf(255),
            BigInteger.valueOf(256),
            BigInteger.valueOf(-1),
            BigInteger.valueOf(-128),
            BigInteger.valueOf(-129),
            BigInteger.TWO.pow(63),
            BigInteger.TWO.pow(127).subtract(BigInteger.ONE))) {
      assertArrayEquals(new ASN1Integer(v).getEncoded(), Der.integer(v), v.toString());
    }
  }

  @Test
  void objectIdentifiersIncludingLargeArcs() throws Exception {
    for (String oid :
        List.of(
            "2.5.4.3",
            "1.2.840.113549.1.1.11",
            "1.2.840.10045.4.3.2",
            "1.3.6.1.4.1.4843.7.4",
            "2.999.1234567890123456789",
            "0.0")) {
      assertArrayEquals(new ASN1ObjectIdentifier(oid).getEncoded(), Der.oid(oid), oid);
    }
    assertThrows(IllegalArgumentException.class, () -> Der.oid("2"));
  }

  @Test
  void lengthsInShortAndLongForm() throws Exception {
    for (int n : new int[] {0, 1, 127, 128, 255, 256, 65_535, 65_536, 70_000}) {
      byte[] b = new byte[n];
      if (n > 0) {
        b[n - 1] = 7;
      }
      byte[] ours = Der.octetString(b);
      assertArrayEquals(new DEROctetString(b).getEncoded(), ours, n + " octets");
      assertEquals(ours.length, Der.length(ours));
      assertArrayEquals(b, Der.contents(ours, 0x04));
    }
  }

  @Test
  void stringsBooleansNullBitStringsAndConstructedTypes() throws Exception {
    assertArrayEquals(new DERUTF8String("fs-1 ünïcode ☃").getEncoded(), Der.utf8("fs-1 ünïcode ☃"));
    assertArrayEquals(ASN1Boolean.TRUE.getEncoded(), Der.bool(true));
    assertArrayEquals(ASN1Boolean.FALSE.getEncoded(), Der.bool(false));
    assertArrayEquals(DERNull.INSTANCE.getEncoded(), Der.nul());
    byte[] sig = {1, 2, 3, (byte) 0xff};
    assertArrayEquals(new DERBitString(sig).getEncoded(), Der.bitString(sig));
    assertArrayEquals(
        new DERSequence(new DERUTF8String("a")).getEncoded(), Der.sequence(Der.utf8("a")));
    assertArrayEquals(new DERSequence().getEncoded(), Der.sequence());
    assertArrayEquals(new DERSet(new DERUTF8String("a")).getEncoded(), Der.set(Der.utf8("a")));
    assertArrayEquals(
        new DERTaggedObject(true, 3, new DERUTF8String("x")).getEncoded(),
        Der.explicit(3, Der.utf8("x")));
    assertArrayEquals(
        new DERTaggedObject(false, 2, new org.bouncycastle.asn1.DERIA5String("h")).getEncoded(),
        Der.implicitPrimitive(2, new byte[] {'h'}));
  }

  @Test
  void namedBitsAsAKeyUsage() throws Exception {
    // named bit i (RFC 5280: digitalSignature 0 … decipherOnly 8) against BouncyCastle's mask
    for (int bits : new int[] {1, 1 | 4, 2 | 32, 1 << 7, 1 << 8, 1 | (1 << 8), 0b1_1111_1111}) {
      int bc = 0;
      for (int i = 0; i <= 8; i++) {
        if ((bits & (1 << i)) != 0) {
          bc |= i < 8 ? 1 << (7 - i) : 1 << (23 - i);
        }
      }
      assertArrayEquals(new KeyUsage(bc).getEncoded(), Der.namedBits(bits), "bits " + bits);
    }
  }

  @Test
  void validityTimesAreUtcTimeFrom1950To2049AndGeneralizedOtherwise() throws Exception {
    for (String t :
        List.of(
            "1949-12-31T23:59:59Z",
            "1950-01-01T00:00:00Z",
            "2026-12-01T20:05:27.750Z",
            "2049-12-31T23:59:59Z",
            "2050-01-01T00:00:00Z",
            "2100-06-30T12:00:00Z")) {
      Instant at = Instant.parse(t);
      Date whole = Date.from(Instant.ofEpochSecond(at.getEpochSecond()));
      assertArrayEquals(new Time(whole).toASN1Primitive().getEncoded(), Der.time(at), t);
    }
  }

  @Test
  void contentsRefusesAnotherTagOrATruncatedElement() {
    assertThrows(IllegalArgumentException.class, () -> Der.contents(Der.utf8("a"), 0x04));
    assertThrows(IllegalArgumentException.class, () -> Der.contents(new byte[] {0x04, 5, 1}, 0x04));
    assertThrows(IllegalArgumentException.class, () -> Der.contents(new byte[0], 0x04));
    assertThrows(
        IllegalArgumentException.class, () -> Der.contents(new byte[] {0x04, (byte) 0x80}, 0x04));
  }

  @Test
  void publicKeyBitsAreTheSubjectPublicKeyOctets() throws Exception {
    for (String alg : List.of("RSA", "EC")) {
      KeyPairGenerator g = KeyPairGenerator.getInstance(alg);
      if (alg.equals("EC")) {
        g.initialize(new ECGenParameterSpec("secp256r1"));
      } else {
        g.initialize(2048);
      }
      var key = g.generateKeyPair().getPublic();
      byte[] expected =
          SubjectPublicKeyInfo.getInstance(key.getEncoded()).getPublicKeyData().getBytes();
      byte[] ours = SelfSignedCertificate.publicKeyBits(key);
      assertArrayEquals(expected, ours, alg);
      assertTrue(ours.length > 60, alg);
    }
  }
}
