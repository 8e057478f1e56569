package io.efscsi.node.iam;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.cert.CertificateEncodingException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.RSAPublicKeySpec;
import java.util.Base64;

/**
 * PEM files of the client certificate and its PKCS#8 private key, written owner-only (0600) and
 * atomically (a temporary file in the same directory renamed over the old one), so a proxy that
 * polls them never reads half a file.
 */
final class PemFiles {

  private PemFiles() {}

  static void writeCertificate(Path file, X509Certificate cert) throws IOException {
    try {
      writeAtomically(file, pem("CERTIFICATE", cert.getEncoded()));
    } catch (CertificateEncodingException e) {
      throw new IOException("cannot encode the certificate for " + file + ": " + e, e);
    }
  }

  static void writePrivateKey(Path file, PrivateKey key) throws IOException {
    if (!"PKCS#8".equals(key.getFormat())) {
      throw new IOException("private key for " + file + " is " + key.getFormat() + ", not PKCS#8");
    }
    writeAtomically(file, pem("PRIVATE KEY", key.getEncoded()));
  }

  static X509Certificate readCertificate(Path file) throws IOException {
    try (var in = Files.newInputStream(file)) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    } catch (CertificateException | ClassCastException e) {
      throw new IOException("cannot read the certificate " + file + ": " + e, e);
    }
  }

  /** Reads an RSA PKCS#8 key file back into a key pair (the public half from the CRT form). */
  static KeyPair readRsaKeyPair(Path file) throws IOException {
    String text = Files.readString(file, StandardCharsets.US_ASCII);
    String b64 =
        text.replace("-----BEGIN PRIVATE KEY-----", "")
            .replace("-----END PRIVATE KEY-----", "")
            .replaceAll("\\s", "");
    try {
      KeyFactory rsa = KeyFactory.getInstance("RSA");
      PrivateKey key =
          rsa.generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(b64)));
      if (!(key instanceof RSAPrivateCrtKey crt)) {
        throw new IOException("private key " + file + " has no public exponent");
      }
      return new KeyPair(
          rsa.generatePublic(new RSAPublicKeySpec(crt.getModulus(), crt.getPublicExponent())), key);
    } catch (GeneralSecurityException | IllegalArgumentException e) {
      throw new IOException("cannot read the private key " + file + ": " + e, e);
    }
  }

  private static String pem(String type, byte[] der) {
    return "-----BEGIN "
        + type
        + "-----\n"
        + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
        + "\n-----END "
        + type
        + "-----\n";
  }

  private static void writeAtomically(Path file, String content) throws IOException {
    Path dir = file.toAbsolutePath().getParent();
    Path tmp =
        Files.createTempFile(
            dir,
            "." + file.getFileName() + ".",
            ".tmp",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    try {
      try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
        ch.write(ByteBuffer.wrap(content.getBytes(StandardCharsets.US_ASCII)));
        ch.force(true);
      }
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }
}
