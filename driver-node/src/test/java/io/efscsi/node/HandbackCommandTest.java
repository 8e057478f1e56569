package io.efscsi.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code efs-csi handback}'s flags: what it refuses, and a dry run on a node with nothing. */
class HandbackCommandTest {

  @TempDir Path dir;

  private record Ran(int code, String out, String err) {}

  private Ran run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code =
        HandbackCommand.run(
            List.of(args),
            Map.of(),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Ran(
        code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  @Test
  void aRelativeTunnelBinaryIsRefusedNamingTheFlagAndTheValue() {
    Ran r = run("--go-driver=v3.4.1", "--tunnel-binary=efs-proxy", "--dry-run");
    assertEquals(2, r.code());
    assertTrue(
        r.err()
            .contains(
                "--tunnel-binary must be an absolute path, as efs-utils' watchdog runs it, got"
                    + " 'efs-proxy'"),
        r.err());
  }

  @Test
  void anUnknownGoDriverLineIsRefused() {
    Ran r = run("--go-driver=v9.0.0", "--dry-run");
    assertEquals(2, r.code());
    assertTrue(
        r.err().contains("--go-driver v9.0.0 is not a release this handback knows"), r.err());
  }

  @Test
  void aDryRunOnANodeWithoutOurStateNamesTheImageAndMakesNothing() {
    Path state = dir.resolve("efs-csi");
    Ran r =
        run(
            "--go-driver=v2.1.4",
            "--dry-run",
            "--state-dir=" + state,
            "--efs-utils-state-dir=" + dir.resolve("var-run-efs"),
            "--efs-utils-config-dir-path=" + dir.resolve("var-amazon-efs"),
            "--efs-utils-config-legacy-dir-path=" + dir.resolve("etc-amazon-efs"),
            "--region=us-east-1");
    assertEquals(0, r.code(), r.err());
    assertTrue(
        r.out()
            .startsWith(
                "handback to the Go driver v2.1.4 (efs-utils 2.x, Amazon Linux 2) of 0 proxies"),
        r.out());
    assertFalse(state.toFile().exists(), "a dry run makes not even our state dir");
    assertFalse(dir.resolve("var-run-efs").toFile().exists());
  }
}
