package io.efscsi.proxy.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import javax.security.auth.x500.X500Principal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The server name check that replaces the JDK's endpoint identification. */
class ServerNameTrustManagerTest {

  @TempDir Path dir;

  @Test
  void exactNamesMatchIgnoringCase() {
    assertTrue(
        ServerNameTrustManager.matches(
            "fs-1.efs.us-east-1.amazonaws.com", "fs-1.efs.us-east-1.amazonaws.com"));
    assertFalse(
        ServerNameTrustManager.matches(
            "fs-1.efs.us-east-1.amazonaws.com", "fs-2.efs.us-east-1.amazonaws.com"));
    assertFalse(ServerNameTrustManager.matches("", ""));
  }

  @Test
  void aWildcardIsTheWholeLeftmostLabelAndMatchesExactlyOneLabel() {
    String p = "*.efs.us-east-1.amazonaws.com";
    assertTrue(ServerNameTrustManager.matches(p, "fs-1.efs.us-east-1.amazonaws.com"));
    assertFalse(ServerNameTrustManager.matches(p, "efs.us-east-1.amazonaws.com"), "no empty label");
    assertFalse(ServerNameTrustManager.matches(p, ".efs.us-east-1.amazonaws.com"));
    assertFalse(
        ServerNameTrustManager.matches(p, "a.fs-1.efs.us-east-1.amazonaws.com"), "one label only");
    assertFalse(ServerNameTrustManager.matches(p, "fs-1.efs.us-west-2.amazonaws.com"));
    assertFalse(
        ServerNameTrustManager.matches(
            "fs-*.efs.us-east-1.amazonaws.com", "fs-1.efs.us-east-1.amazonaws.com"),
        "no partial-label wildcards");
    assertFalse(
        ServerNameTrustManager.matches(
            "fs-1.*.us-east-1.amazonaws.com", "fs-1.efs.us-east-1.amazonaws.com"),
        "leftmost only");
    assertFalse(
        ServerNameTrustManager.matches(
            "*.*.us-east-1.amazonaws.com", "fs-1.efs.us-east-1.amazonaws.com"));
    assertFalse(
        ServerNameTrustManager.matches("*.com", "amazonaws.com"), "not over a single label");
    assertFalse(ServerNameTrustManager.matches("*", "localhost"));
    assertFalse(ServerNameTrustManager.matches("*.", "a."));
  }

  @Test
  void theCommonNameIsTheMostSpecificOneAndOnlyAPlainString() {
    assertEquals(
        "fs-1.efs.x.amazonaws.com",
        ServerNameTrustManager.mostSpecificCommonName(
            new X500Principal("CN=fs-1.efs.x.amazonaws.com, O=Amazon, CN=outer")));
    assertEquals(
        "",
        ServerNameTrustManager.mostSpecificCommonName(new X500Principal("CN=a\\,b.example.com")));
    assertNull(ServerNameTrustManager.mostSpecificCommonName(new X500Principal("O=Amazon, C=US")));
  }

  @Test
  void subjectAlternativeNamesComeFirstThenTheCommonNameThenNothing() throws Exception {
    X509Certificate wildcard =
        cert("CN=ignored.example.com", "dns:*.efs.us-east-1.amazonaws.com,dns:other.example.com");
    assertTrue(ServerNameTrustManager.names(wildcard, "fs-12345678.efs.us-east-1.amazonaws.com"));
    assertTrue(ServerNameTrustManager.names(wildcard, "FS-12345678.EFS.us-east-1.amazonaws.com."));
    assertTrue(ServerNameTrustManager.names(wildcard, "other.example.com"));
    assertFalse(
        ServerNameTrustManager.names(wildcard, "ignored.example.com"),
        "the CN does not count when there are DNS names");
    assertFalse(ServerNameTrustManager.names(wildcard, "fs-12345678.efs.eu-west-1.amazonaws.com"));

    X509Certificate cnOnly = cert("CN=fs-1.efs.us-east-1.amazonaws.com, O=Test", null);
    assertTrue(ServerNameTrustManager.names(cnOnly, "fs-1.efs.us-east-1.amazonaws.com"));
    assertFalse(ServerNameTrustManager.names(cnOnly, "fs-2.efs.us-east-1.amazonaws.com"));

    X509Certificate ip = cert("CN=127.0.0.1", "ip:127.0.0.1,dns:fs-1.efs.us-east-1.amazonaws.com");
    assertTrue(ServerNameTrustManager.names(ip, "127.0.0.1"));
    assertFalse(ServerNameTrustManager.names(ip, "127.0.0.2"));
    assertFalse(ServerNameTrustManager.names(cnOnly, "127.0.0.1"), "an address never matches a CN");
  }

  /** A self-signed certificate made with the JDK's keytool. */
  private X509Certificate cert(String subject, String san) throws Exception {
    Path store = dir.resolve("s" + System.nanoTime() + ".p12");
    List<String> cmd =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair",
                "-keystore",
                store.toString(),
                "-storepass",
                "changeit",
                "-alias",
                "k",
                "-keyalg",
                "EC",
                "-dname",
                subject,
                "-validity",
                "2"));
    if (san != null) {
      cmd.addAll(List.of("-ext", "san=" + san));
    }
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    assertEquals(0, p.waitFor(), out);
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(store)) {
      ks.load(in, "changeit".toCharArray());
    }
    return (X509Certificate) ks.getCertificate("k");
  }
}
