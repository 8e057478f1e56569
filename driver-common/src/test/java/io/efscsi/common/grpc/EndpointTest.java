package io.efscsi.common.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class EndpointTest {

  @ParameterizedTest
  @CsvSource({
    "unix:///csi/csi.sock, /csi/csi.sock",
    "unix:/csi/csi.sock, /csi/csi.sock",
    "unix://tmp/csi.sock, /tmp/csi.sock",
    "UNIX:///var/lib/csi/sockets/pluginproxy/csi.sock, /var/lib/csi/sockets/pluginproxy/csi.sock",
    "unix:///a/../b/./c.sock, /b/c.sock",
    "'  unix:///x.sock  ', /x.sock"
  })
  void parsesUnixForms(String text, String path) {
    assertEquals(new Endpoint.Unix(Path.of(path)), Endpoint.parse(text));
  }

  @ParameterizedTest
  @CsvSource({
    "tcp://127.0.0.1:10000, 127.0.0.1, 10000",
    "tcp://:9808, '', 9808",
    "tcp://localhost:0, localhost, 0",
    "tcp://[::1]:5000, ::1, 5000"
  })
  void parsesTcpForms(String text, String host, int port) {
    assertEquals(new Endpoint.Tcp(host, port), Endpoint.parse(text));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "   ",
        "/csi/csi.sock",
        "http://x:1",
        "unix:",
        "unix://",
        "unix:///",
        "unix:relative.sock",
        "unix:///dir/",
        "tcp:127.0.0.1:80",
        "tcp://127.0.0.1",
        "tcp://127.0.0.1:",
        "tcp://127.0.0.1:http",
        "tcp://127.0.0.1:70000",
        "tcp://127.0.0.1:-1",
        "tcp://::1:80",
        "tcp://host:80/path"
      })
  void rejectsWithAMessageNamingTheValue(String text) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Endpoint.parse(text));
    assertTrue(e.getMessage().contains("'" + text + "'"), e.getMessage());
    assertTrue(e.getMessage().contains("accepted: unix:///"), e.getMessage());
  }

  @org.junit.jupiter.api.Test
  void rendersBackToAnEndpoint() {
    assertEquals("unix:///csi/csi.sock", Endpoint.parse("unix:/csi/csi.sock").toString());
    assertEquals("tcp://[::1]:5", Endpoint.parse("tcp://[::1]:5").toString());
  }
}
