package io.efscsi.common.http;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/** Builds a server {@link SSLContext} from a PEM certificate chain and a PEM PKCS#8 key. */
public final class PemTls {

  private PemTls() {}

  public static SSLContext serverContext(Path certFile, Path keyFile) throws IOException {
    try {
      List<? extends Certificate> chain;
      try (InputStream in = Files.newInputStream(certFile)) {
        chain = List.copyOf(CertificateFactory.getInstance("X.509").generateCertificates(in));
      }
      if (chain.isEmpty()) {
        throw new IOException("no certificate in " + certFile);
      }
      PrivateKey key = readKey(keyFile, chain.get(0).getPublicKey().getAlgorithm());
      return serverContext(key, chain.toArray(Certificate[]::new));
    } catch (GeneralSecurityException e) {
      throw new IOException(
          "cannot use " + certFile + " and " + keyFile + " for HTTPS: " + e.getMessage(), e);
    }
  }

  /** A server context presenting {@code chain} (leaf first) with its {@code key}. */
  static SSLContext serverContext(PrivateKey key, Certificate[] chain)
      throws IOException, GeneralSecurityException {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    ks.load(null, null);
    char[] pw = new char[0];
    ks.setKeyEntry("metrics", key, pw, chain);
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, pw);
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf.getKeyManagers(), null, null);
    return ctx;
  }

  private static PrivateKey readKey(Path keyFile, String algorithm)
      throws IOException, GeneralSecurityException {
    String pem = Files.readString(keyFile);
    if (pem.contains("BEGIN RSA PRIVATE KEY") || pem.contains("BEGIN EC PRIVATE KEY")) {
      throw new IOException(
          keyFile
              + " holds a PKCS#1/SEC1 key; convert it with 'openssl pkcs8 -topk8 -nocrypt -in "
              + keyFile
              + "'");
    }
    int begin = pem.indexOf("-----BEGIN PRIVATE KEY-----");
    int end = pem.indexOf("-----END PRIVATE KEY-----");
    if (begin < 0 || end < begin) {
      throw new IOException(keyFile + " holds no PEM 'PRIVATE KEY' block");
    }
    String b64 = pem.substring(begin + 27, end).replaceAll("\\s", "");
    byte[] der = Base64.getDecoder().decode(b64);
    return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
  }
}
