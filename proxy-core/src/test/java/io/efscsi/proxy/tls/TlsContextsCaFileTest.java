package io.efscsi.proxy.tls;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.efscsi.proxy.config.ProxyConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** tls.ca-file may name any file (efs-utils' cafile=): a bad one is refused without quoting it. */
class TlsContextsCaFileTest {

  @TempDir Path tmp;

  @Test
  void aFileThatIsNoCaBundleIsNamedButNeverQuoted() throws IOException {
    Path file = tmp.resolve("secret.pem");
    // the JDK's own message quotes a mismatched PEM header and footer
    Files.writeString(
        file, "-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE hunter2-----\n");
    ProxyConfig config =
        ProxyConfig.fromMap(
            Map.of(
                ProxyConfig.Keys.LISTEN_PORT,
                "1",
                ProxyConfig.Keys.UPSTREAM_HOST,
                "127.0.0.1",
                ProxyConfig.Keys.CA_FILE,
                file.toString()));
    IOException e = assertThrows(IOException.class, () -> new TlsContexts(config));
    assertEquals(
        "cannot read the CA certificates in "
            + file
            + ": not X.509 certificates in PEM or DER form",
        e.getMessage());
    assertNull(e.getCause(), "the cause's message would quote the file");
    assertFalse(e.toString().contains("hunter2"), e.toString());
  }
}
