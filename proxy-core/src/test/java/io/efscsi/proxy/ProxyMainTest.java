package io.efscsi.proxy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.proxy.config.ProxyEnv;
import io.netty.channel.unix.Socket;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the proxy process tells its supervisor through exit codes when handed a listener. */
class ProxyMainTest {

  @TempDir Path dir;
  final ByteArrayOutputStream err = new ByteArrayOutputStream();

  int run(int port, Map<String, String> env) throws Exception {
    Path config = dir.resolve("proxy.conf");
    InheritedListenerTest.config(port, 2049, null).write(config);
    return ProxyMain.run(
        List.of("--config", config.toString()),
        new PrintStream(err, true, StandardCharsets.UTF_8),
        env);
  }

  String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void aListenFdThatIsNotANumberIsAConfigError() throws Exception {
    assertEquals(ProxyMain.EXIT_CONFIG, run(20049, Map.of(ProxyEnv.LISTEN_FD, "fd3")));
    assertEquals(
        "efs-csi proxy: environment: invalid value 'fd3' for 'EFSCSI_LISTEN_FD': expected a whole"
            + " number from 0 to 2147483647\n",
        err());
  }

  @Test
  void aListenerOnAnotherPortFailsLikeABindFailure() throws Throwable {
    int port = ClientCloseTest.freePort();
    int other = ClientCloseTest.freePort();
    Socket wrong = Fds.socket(other, true);
    try {
      assertEquals(
          ProxyMain.EXIT_BIND_FAILED,
          run(port, Map.of(ProxyEnv.LISTEN_FD, Integer.toString(wrong.intValue()))));
      assertTrue(
          err()
              .startsWith(
                  "efs-csi proxy: cannot use inherited listener fd "
                      + wrong.intValue()
                      + " (EFSCSI_LISTEN_FD): it is bound to 127.0.0.1:"
                      + other
                      + ", expected 127.0.0.1:"
                      + port),
          err());
      assertTrue(Fds.listening(wrong.intValue()), "the refused descriptor was left alone");
    } finally {
      wrong.close();
    }
  }

  @Test
  void drainedAndStandbyRunOutAreOrdinaryExits() {
    assertEquals(0, ProxyMain.exitCode(null), "SIGTERM");
    assertEquals(0, ProxyMain.exitCode(ProxyServer.Stop.DRAINED));
    assertEquals(0, ProxyMain.exitCode(ProxyServer.Stop.STANDBY_EXPIRED));
    assertEquals(ProxyMain.EXIT_LISTEN_LOST, ProxyMain.exitCode(ProxyServer.Stop.LISTEN_LOST));
  }
}
