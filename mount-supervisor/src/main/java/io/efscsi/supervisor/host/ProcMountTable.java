package io.efscsi.supervisor.host;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Reads {@code /proc/self/mountinfo} (or another mountinfo file) with one open and one read to the
 * end. Reading the table never touches an NFS mount point, so it cannot hang on a dead server.
 */
public final class ProcMountTable implements MountTable {

  public static final Path SELF = Path.of("/proc/self/mountinfo");

  private final Path file;

  public ProcMountTable(Path file) {
    this.file = file;
  }

  @Override
  public List<MountInfo> read() throws IOException {
    return MountInfoParser.parse(new String(Files.readAllBytes(file), StandardCharsets.UTF_8));
  }

  @Override
  public String toString() {
    return file.toString();
  }
}
