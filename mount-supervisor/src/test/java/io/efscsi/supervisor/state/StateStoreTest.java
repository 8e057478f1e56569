package io.efscsi.supervisor.state;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.proxy.json.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateStoreTest {

  @TempDir Path tmp;

  static ProxyRecord record(int port) {
    return new ProxyRecord(
        "proxy-" + port,
        "fs-0123::fsap-0a|tls|\"quoted\"\nkey",
        port,
        4242,
        987654,
        "v1:efs-csi/proxy-" + port,
        Map.of(
            "listen.port",
            Integer.toString(port),
            "upstream.host",
            "fs-0123.efs.us-east-1.amazonaws.com"),
        Set.of("/var/lib/kubelet/plugins/a/globalmount", "/b"),
        3,
        1_700_000_000_000L);
  }

  @Test
  void writeThenListGivesTheSameRecordsAndLeavesNoTempFile() throws Exception {
    StateStore s = new StateStore(tmp);
    s.write(record(20050));
    s.write(record(20049));
    assertEquals(List.of(record(20049), record(20050)), s.list());
    try (Stream<Path> files = Files.list(s.dir())) {
      assertEquals(2, files.count());
    }
    s.write(record(20049).withUsers(Set.of()));
    assertEquals(Set.of(), s.list().getFirst().users());
    s.delete("proxy-20049");
    s.delete("proxy-20049");
    assertEquals(List.of(record(20050)), s.list());
  }

  @Test
  void corruptRecordsAreMovedAsideNotFatal() throws Exception {
    StateStore s = new StateStore(tmp);
    s.write(record(20049));
    Files.writeString(
        s.dir().resolve("proxy-20050.json"), "{\"version\": 1, \"id\": \"proxy-20050\", trunc");
    Files.writeString(s.dir().resolve("proxy-20051.json"), record(20052).toJson()); // wrong file
    Files.writeString(
        s.dir().resolve("proxy-20053.json"),
        record(20053)
            .toJson()
            .replace("\"version\": 1", "\"version\": 9")
            .replace("\"minReader\": 1", "\"minReader\": 9"));
    assertEquals(List.of(record(20049)), s.list());
    try (Stream<Path> files = Files.list(s.dir())) {
      assertEquals(3, files.filter(f -> f.getFileName().toString().contains(".corrupt-")).count());
    }
    assertEquals(List.of(record(20049)), s.list(), "a second read finds the same");
  }

  @Test
  void recordsRefuseMissingOrMistypedFields() {
    String json = record(20049).toJson();
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> ProxyRecord.fromJson(json.replace("\"port\": 20049", "\"port\": \"x\"")));
    assertEquals("state record field 'port' must be an integer", e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> ProxyRecord.fromJson("[]"));
    assertEquals("a state record must be a JSON object", e.getMessage());
    e =
        assertThrows(
            IllegalArgumentException.class,
            () -> ProxyRecord.fromJson(json.replace("9\"", "9\"x")));
    assertTrue(e.getMessage().startsWith("invalid JSON at offset"), e.getMessage());
  }

  @Test
  void jsonRoundTripsEscapes() {
    Object v =
        Json.parse(
            Json.write(
                Map.of("k", "a\"b\\c\nd\te\u0001", "n", -5L, "b", true, "l", List.of("x", 1L))));
    assertEquals(Map.of("k", "a\"b\\c\nd\te\u0001", "n", -5L, "b", true, "l", List.of("x", 1L)), v);
    assertEquals("é", Json.parse("\"\\u00e9\""));
    assertThrows(IllegalArgumentException.class, () -> Json.parse("{\"a\":1} x"));
    // efs-utils' state files carry floats (mount_time); our records take integers only
    assertEquals(1763900000.123456, Json.parse("1763900000.123456"));
    assertEquals(-2.5e3, Json.parse("-2.5e3"));
    assertThrows(IllegalArgumentException.class, () -> Json.parse("1.5.2"));
    String json = record(20049).toJson();
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> ProxyRecord.fromJson(json.replace("\"port\": 20049", "\"port\": 20049.5")));
    assertTrue(e.getMessage().contains("'port' must be an integer"), e.getMessage());
  }
}
