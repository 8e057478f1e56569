package io.efscsi.proxy.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProxyConfigTest {

  @TempDir Path tmp;

  static Map<String, String> minimal() {
    Map<String, String> m = new HashMap<>();
    m.put("listen.port", "20049");
    m.put("upstream.host", "fs-0123abcd.efs.us-east-1.amazonaws.com");
    return m;
  }

  @Test
  void defaultsAreEfsUtilsOnes() {
    ProxyConfig c = ProxyConfig.fromMap(minimal());
    assertEquals(2049, c.upstreamPort());
    assertTrue(c.tls());
    assertEquals("fs-0123abcd.efs.us-east-1.amazonaws.com", c.serverName());
    assertEquals(ProxyConfig.BindProtocol.AWSFILE_V3, c.bind());
    assertEquals(5, c.maxConnections());
    assertTrue(c.caFile().isEmpty(), "bundled Amazon roots");
  }

  @Test
  void writeThenLoadGivesTheSameConfig() throws Exception {
    Map<String, String> m = minimal();
    m.put("tls.ca-file", "/etc/ca.pem");
    m.put("tls.cert-file", "/run/c.pem");
    m.put("tls.key-file", "/run/k.pem");
    m.put("bind.protocol", "efs-v2");
    m.put("control.socket", "/var/run/efs-csi/p.sock");
    ProxyConfig c = ProxyConfig.fromMap(m);
    Path f = tmp.resolve("proxy.conf");
    c.write(f);
    assertEquals(c, ProxyConfig.load(f));
    assertTrue(Files.readString(f).contains("upstream.host="));
  }

  @Test
  void badValuesNameKeyAndValue() {
    Map<String, String> m = minimal();
    m.put("listen.port", "x");
    assertEquals(
        "invalid value 'x' for 'listen.port': expected an integer",
        assertThrows(ConfigException.class, () -> ProxyConfig.fromMap(m)).getMessage());
    Map<String, String> unknown = minimal();
    unknown.put("conect", "x");
    assertTrue(
        assertThrows(ConfigException.class, () -> ProxyConfig.fromMap(unknown))
            .getMessage()
            .startsWith("invalid value 'x' for 'conect': expected a known key"));
    Map<String, String> bind = minimal();
    bind.put("bind.protocol", "v4");
    assertTrue(
        assertThrows(ConfigException.class, () -> ProxyConfig.fromMap(bind))
            .getMessage()
            .contains("awsfile-v3, efs-v2 or none"));
    Map<String, String> halfCert = minimal();
    halfCert.put("tls.cert-file", "/c.pem");
    assertThrows(ConfigException.class, () -> ProxyConfig.fromMap(halfCert));
    Map<String, String> relative = minimal();
    relative.put("tls.ca-file", "ca.pem");
    assertTrue(
        assertThrows(ConfigException.class, () -> ProxyConfig.fromMap(relative))
            .getMessage()
            .contains("absolute path"));
    Map<String, String> noHost = minimal();
    noHost.remove("upstream.host");
    assertThrows(ConfigException.class, () -> ProxyConfig.fromMap(noHost));
  }

  @Test
  void theConnectAttemptDelayIsRfc8305s() {
    assertEquals(
        java.time.Duration.ofMillis(250), ProxyConfig.fromMap(minimal()).connectAttemptDelay());
    Map<String, String> m = minimal();
    m.put("upstream.connect-attempt-delay-ms", "100");
    assertEquals(java.time.Duration.ofMillis(100), ProxyConfig.fromMap(m).connectAttemptDelay());
    m.put("upstream.connect-attempt-delay-ms", "50");
    assertEquals(
        "invalid value '50' for 'upstream.connect-attempt-delay-ms': expected 100-2000"
            + " milliseconds (RFC 8305)",
        assertThrows(ConfigException.class, () -> ProxyConfig.fromMap(m)).getMessage());
    m.put("upstream.connect-attempt-delay-ms", "2001");
    assertThrows(ConfigException.class, () -> ProxyConfig.fromMap(m));
  }
}
