package io.efscsi.emulator.mounttarget;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.Optional;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;
import org.bouncycastle.asn1.ASN1Primitive;
import org.bouncycastle.asn1.ASN1String;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The mount target's TLS: a CA of its own (its certificate written as PEM for the client to trust)
 * and a server certificate it issues for the file system's DNS name. Client certificates are asked
 * for, not verified: EFS reads the access point from them ({@value #ACCESS_POINT_OID}).
 */
final class MountTargetTls {

  static final String ACCESS_POINT_OID = "1.3.6.1.4.1.4843.7.1";
  private static final SecureRandom RANDOM = new SecureRandom();

  private MountTargetTls() {}

  /** Issues the certificates, writes the CA's to {@code caFile}, returns the server context. */
  static SSLContext serverContext(String dnsName, Path caFile) throws IOException {
    try {
      KeyPair ca = ecKeys();
      KeyPair leaf = ecKeys();
      X500Name caName = new X500Name("CN=efs-csi demo mount target CA");
      X509Certificate caCert =
          sign(
              new JcaX509v3CertificateBuilder(
                      caName, serial(), notBefore(), notAfter(), caName, ca.getPublic())
                  .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
                  .addExtension(
                      Extension.keyUsage,
                      true,
                      new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign)),
              ca.getPrivate());
      X509Certificate leafCert =
          sign(
              new JcaX509v3CertificateBuilder(
                      caName,
                      serial(),
                      notBefore(),
                      notAfter(),
                      new X500Name("CN=" + dnsName),
                      leaf.getPublic())
                  .addExtension(
                      Extension.subjectAlternativeName,
                      false,
                      new GeneralNames(new GeneralName(GeneralName.dNSName, dnsName)))
                  .addExtension(Extension.basicConstraints, true, new BasicConstraints(false)),
              ca.getPrivate());
      Files.writeString(caFile, pem(caCert));
      KeyStore ks = KeyStore.getInstance("PKCS12");
      ks.load(null, null);
      char[] pass = "mount-target".toCharArray();
      ks.setKeyEntry("server", leaf.getPrivate(), pass, new X509Certificate[] {leafCert, caCert});
      KeyManagerFactory kmf =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(ks, pass);
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(kmf.getKeyManagers(), new TrustManager[] {new AnyClient()}, RANDOM);
      return ctx;
    } catch (GeneralSecurityException | OperatorCreationException e) {
      throw new IOException("cannot issue the mount target's certificates: " + e.getMessage(), e);
    }
  }

  /** The access point named in a client certificate, if any. */
  static Optional<String> accessPoint(X509Certificate cert) throws IOException {
    byte[] ext = cert.getExtensionValue(ACCESS_POINT_OID);
    if (ext == null) {
      return Optional.empty();
    }
    ASN1Primitive value = JcaX509ExtensionUtils.parseExtensionValue(ext);
    return value instanceof ASN1String s ? Optional.of(s.getString()) : Optional.empty();
  }

  private static KeyPair ecKeys() throws GeneralSecurityException {
    KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
    g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
    return g.generateKeyPair();
  }

  private static X509Certificate sign(
      org.bouncycastle.cert.X509v3CertificateBuilder b, PrivateKey key)
      throws OperatorCreationException, GeneralSecurityException {
    return new JcaX509CertificateConverter()
        .getCertificate(b.build(new JcaContentSignerBuilder("SHA256withECDSA").build(key)));
  }

  private static BigInteger serial() {
    return new BigInteger(63, RANDOM);
  }

  private static Date notBefore() {
    return Date.from(Instant.now().minus(Duration.ofHours(1)));
  }

  private static Date notAfter() {
    return Date.from(Instant.now().plus(Duration.ofDays(1)));
  }

  private static String pem(X509Certificate c) throws GeneralSecurityException {
    return "-----BEGIN CERTIFICATE-----\n"
        + Base64.getMimeEncoder(64, "\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII))
            .encodeToString(c.getEncoded())
        + "\n-----END CERTIFICATE-----\n";
  }

  /** Asks for a client certificate and accepts any: it names the access point, nothing more. */
  private static final class AnyClient implements X509TrustManager {
    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) {}

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType)
        throws java.security.cert.CertificateException {
      throw new java.security.cert.CertificateException("a server context trusts no servers");
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return new X509Certificate[0];
    }
  }
}
