package io.efscsi.proxy.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class ProxyEnvTest {

  @Test
  void nothingSetIsAProxyThatBindsItsPort() {
    assertEquals(ProxyEnv.NONE, ProxyEnv.fromMap(Map.of("PATH", "/bin")));
    assertEquals(Duration.ofMinutes(2), ProxyEnv.NONE.standbyTimeout());
    assertEquals("", ProxyEnv.NONE.build());
  }

  @Test
  void theSupervisorsVariablesAreRead() {
    ProxyEnv env =
        ProxyEnv.fromMap(
            Map.of(
                "EFSCSI_LISTEN_FD", "3",
                "EFSCSI_STANDBY_TIMEOUT_MS", "5000",
                "EFSCSI_PROXY_BUILD", "0.2.0+abc123"));
    assertEquals(OptionalInt.of(3), env.listenFd());
    assertEquals(Duration.ofSeconds(5), env.standbyTimeout());
    assertEquals("0.2.0+abc123", env.build());
  }

  @Test
  void aValueThatIsNotANumberIsRefusedWithItsNameAndValue() {
    for (String bad : new String[] {"three", "-1", "3 ", "0x3", "2147483648"}) {
      ConfigException e =
          assertThrows(
              ConfigException.class, () -> ProxyEnv.fromMap(Map.of("EFSCSI_LISTEN_FD", bad)));
      assertEquals(
          "invalid value '"
              + bad
              + "' for 'EFSCSI_LISTEN_FD': expected a whole number from 0 to 2147483647",
          e.getMessage());
    }
    ConfigException e =
        assertThrows(
            ConfigException.class,
            () -> ProxyEnv.fromMap(Map.of("EFSCSI_STANDBY_TIMEOUT_MS", "0")));
    assertEquals(
        "invalid value '0' for 'EFSCSI_STANDBY_TIMEOUT_MS': expected a whole number from 1 to "
            + Long.MAX_VALUE / 1_000_000,
        e.getMessage());
  }
}
