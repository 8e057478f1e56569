package io.efscsi.node.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.error.DriverException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** cafile= and jwtpath= take any path, as efs-utils, but only a regular file the plugin reads. */
class OptionFilesTest {

  @TempDir Path tmp;

  private static MountPlan plan(Optional<Path> caFile, Optional<String> jwtPath) {
    return new MountPlan(
        "fs-12345678",
        Optional.empty(),
        "/",
        "fs-12345678.efs.us-east-1.amazonaws.com",
        2049,
        true,
        "fs-12345678.efs.us-east-1.amazonaws.com",
        jwtPath.isPresent(),
        caFile,
        true,
        new MountPlan.IamCredentialsSource(
            Optional.empty(), jwtPath.map(p -> "arn:aws:iam::111122223333:role/r"), jwtPath),
        List.of("nfsvers=4.1"),
        false,
        false);
  }

  @Test
  void regularReadableFilesAnywherePassAndNothingNamedPassesToo() throws Exception {
    Path ca = Files.writeString(tmp.resolve("ca.pem"), "not even PEM: contents are not looked at");
    Path token = Files.writeString(tmp.resolve("token"), "eyJ...");
    Path link = Files.createSymbolicLink(tmp.resolve("ca-link.pem"), ca);
    MountPlan p = plan(Optional.of(link), Optional.of(token.toString()));
    assertSame(p, OptionFiles.check(p));
    MountPlan none = plan(Optional.empty(), Optional.empty());
    assertSame(none, OptionFiles.check(none));
    assertNull(OptionFiles.problem(ca));
  }

  @Test
  void whatIsNotARegularReadableFileIsRefusedNamingOnlyThePath() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("certs"));
    Path missing = tmp.resolve("missing.pem");
    Path dangling = Files.createSymbolicLink(tmp.resolve("dangling"), missing);
    Path proc = Files.createSymbolicLink(tmp.resolve("environ"), Path.of("/proc/self/environ"));

    assertEquals(dir + " is not a regular file", OptionFiles.problem(dir));
    assertEquals(missing + " does not exist on this node", OptionFiles.problem(missing));
    assertEquals(dangling + " does not exist on this node", OptionFiles.problem(dangling));
    assertEquals(
        "/dev/null is one of the kernel's files in /dev, not a file of its own",
        OptionFiles.problem(Path.of("/dev/null")));
    String viaLink = OptionFiles.problem(proc);
    assertTrue(
        viaLink.startsWith(proc + " (it resolves to /proc/")
            && viaLink.endsWith(" is one of the kernel's files in /proc, not a file of its own"),
        viaLink);

    DriverException e =
        assertThrows(
            DriverException.class,
            () -> OptionFiles.check(plan(Optional.of(dir), Optional.empty())));
    assertEquals(DriverException.Kind.INVALID_ARGUMENT, e.kind());
    assertEquals(
        "mount option 'cafile=" + dir + "' is invalid: " + dir + " is not a regular file",
        e.getMessage());
    e =
        assertThrows(
            DriverException.class,
            () -> OptionFiles.check(plan(Optional.empty(), Optional.of("/proc/self/environ"))));
    assertTrue(e.getMessage().startsWith("mount option 'jwtpath=/proc/self/environ' is invalid: "));
  }
}
