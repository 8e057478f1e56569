package io.efscsi.supervisor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.proxy.config.ConfigException;
import io.efscsi.proxy.config.ProxyConfig;
import io.efscsi.proxy.config.ProxyConfig.BindProtocol;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ProxySpecTest {

  static final ProxySpec TLS =
      new ProxySpec(
          "fs-1.efs.us-east-1.amazonaws.com",
          2049,
          true,
          "",
          true,
          Optional.of(Path.of("/ca.pem")),
          Optional.of(new ProxySpec.ClientCertificate(Path.of("/c.pem"), Path.of("/k.pem"))),
          BindProtocol.AWSFILE_V3);

  @Test
  void theSupervisorAddsOnlyThePortAndTheControlSocket() {
    ProxyConfig c = TLS.config(20049, Path.of("/state/proxies/proxy-20049.sock"));
    assertEquals(20049, c.listenPort());
    assertEquals(Optional.of(Path.of("/state/proxies/proxy-20049.sock")), c.controlSocket());
    assertEquals("fs-1.efs.us-east-1.amazonaws.com", c.serverName(), "blank: the upstream host");
    assertEquals(Optional.of(Path.of("/c.pem")), c.certFile());
    assertEquals(Optional.of(Path.of("/k.pem")), c.keyFile());
    assertEquals(BindProtocol.AWSFILE_V3, c.bind());
    assertEquals(ProxyConfig.fromMap(c.toMap()), c, "what the record stores reads back the same");
    assertEquals(TLS, ProxySpec.of(c), "the spec of its config is the spec");
  }

  @Test
  void whatTheProxyWouldRefuseIsRefusedWhenTheSpecIsMade() {
    ConfigException port =
        assertThrows(ConfigException.class, () -> ProxySpec.plain("10.0.0.9", 70000));
    assertTrue(port.getMessage().contains("'70000' for 'upstream.port'"), port.getMessage());
    ConfigException host = assertThrows(ConfigException.class, () -> ProxySpec.plain(" ", 2049));
    assertTrue(host.getMessage().contains("'upstream.host'"), host.getMessage());
  }
}
