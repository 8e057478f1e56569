package io.efscsi.supervisor.upgrade;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProxyBuildTest {

  private static Path lib(Path dir) throws Exception {
    Path lib = Files.createDirectories(dir.resolve("lib/proxy"));
    jar(lib.resolve("proxy-core.jar"), "io/efscsi/proxy/ProxyMain.class", "classes");
    jar(lib.resolve("netty.jar"), "io/netty/Channel.class", "netty");
    Files.writeString(lib.resolve("jvm.options"), "-Xss256k\n");
    Files.createDirectories(lib.resolve("native"));
    Files.writeString(lib.resolve("native/libnetty.so"), "elf");
    return lib;
  }

  private static void jar(Path file, String entry, String content) throws Exception {
    try (var out = new java.util.zip.ZipOutputStream(Files.newOutputStream(file))) {
      out.putNextEntry(new java.util.zip.ZipEntry(entry));
      out.write(content.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      out.closeEntry();
    }
  }

  @Test
  void aClassChangedInAJarChangesIt(@TempDir Path dir) throws Exception {
    Path lib = lib(dir);
    String before = ProxyBuild.of(lib, "25");
    jar(lib.resolve("proxy-core.jar"), "io/efscsi/proxy/ProxyMain.class", "classes, fixed");
    assertNotEquals(before, ProxyBuild.of(lib, "25"));
  }

  @Test
  void theSameFilesAndRuntimeGiveTheSameBuildWhereverTheyLie(@TempDir Path a, @TempDir Path b)
      throws Exception {
    String one = ProxyBuild.of(lib(a), "25.0.1+8");
    assertTrue(one.matches("[0-9a-f]{12}"), one);
    assertEquals(one, ProxyBuild.of(lib(b), "25.0.1+8"));
  }

  @Test
  void anyFileOrTheRuntimeChangesIt(@TempDir Path dir) throws Exception {
    Path lib = lib(dir);
    String before = ProxyBuild.of(lib, "25.0.1+8");
    assertNotEquals(before, ProxyBuild.of(lib, "25.0.2+3"), "a JDK patch is a proxy change");
    Files.writeString(lib.resolve("jvm.options"), "-Xss512k\n");
    String options = ProxyBuild.of(lib, "25.0.1+8");
    assertNotEquals(before, options);
    Files.writeString(lib.resolve("native/libnetty.so"), "elf2");
    assertNotEquals(options, ProxyBuild.of(lib, "25.0.1+8"));
  }

  @Test
  void theAotCacheIsNotPartOfIt(@TempDir Path dir) throws Exception {
    Path lib = lib(dir);
    String before = ProxyBuild.of(lib, "25");
    Files.writeString(lib.resolve("proxy.aot"), "trained");
    assertEquals(before, ProxyBuild.of(lib, "25"));
  }

  @Test
  void aRenamedFileChangesIt(@TempDir Path dir) throws Exception {
    Path lib = lib(dir);
    String before = ProxyBuild.of(lib, "25");
    Files.move(lib.resolve("netty.jar"), lib.resolve("netty2.jar"));
    assertNotEquals(before, ProxyBuild.of(lib, "25"));
  }
}
