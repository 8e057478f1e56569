package io.efscsi.supervisor.cgroup;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Small helpers shared by the cgroupfs adapters. */
final class CgroupFiles {

  private static final Logger LOG = LoggerFactory.getLogger(CgroupFiles.class);

  /** The pid-placing wrapper: writes $$ to every file in $EFSCSI_CGROUP_PROCS, then execs. */
  static final String PLACE_SCRIPT =
      "for f in $EFSCSI_CGROUP_PROCS; do echo $$ > \"$f\" || { echo \"efs-csi: cannot join"
          + " cgroup $f\" >&2; exit 97; }; done; unset EFSCSI_CGROUP_PROCS; exec \"$@\"";

  /** Exit code of the wrapper when joining the group failed. */
  static final int EXIT_PLACEMENT_FAILED = 97;

  private CgroupFiles() {}

  static List<String> wrapWithScript(List<String> command) {
    List<String> out = new ArrayList<>(List.of("/bin/sh", "-c", PLACE_SCRIPT, "efs-csi-proxy"));
    out.addAll(command);
    return out;
  }

  static void write(Path file, String value) throws IOException {
    try {
      Files.writeString(file, value, StandardCharsets.US_ASCII, StandardOpenOption.WRITE);
    } catch (IOException e) {
      throw new IOException("cannot write '" + value + "' to " + file + ": " + e.getMessage(), e);
    }
  }

  /** Writes the value when the file exists (optional knobs such as memory.swap.max). */
  static void writeIfPresent(Path file, String value) throws IOException {
    if (Files.exists(file)) {
      write(file, value);
    }
  }

  /** The {@code name N} line of a flat keyed file, -1 when the file or the key is absent. */
  static long keyed(Path file, String key) {
    try {
      for (String line : Files.readAllLines(file, StandardCharsets.US_ASCII)) {
        String[] kv = line.trim().split("\\s+");
        if (kv.length == 2 && kv[0].equals(key)) {
          return Long.parseLong(kv[1]);
        }
      }
    } catch (NoSuchFileException e) {
      return -1;
    } catch (IOException | NumberFormatException e) {
      LOG.debug("cannot read {} from {}: {}", key, file, e.toString());
    }
    return -1;
  }

  /** The pids a cgroup.procs file lists; empty when it cannot be read (the group is gone). */
  static List<Long> pids(Path procs) {
    try {
      return Files.readAllLines(procs).stream()
          .map(String::strip)
          .filter(l -> !l.isEmpty())
          .map(Long::parseLong)
          .toList();
    } catch (IOException | NumberFormatException e) {
      return List.of();
    }
  }

  /**
   * A file holding one number ({@code memory.current}); -1 when absent, unreadable or {@code max}.
   * Values at or above 2^62 (cgroup v1's "no limit") are -1 too.
   */
  static long single(Path file) {
    try {
      String v = Files.readString(file, StandardCharsets.US_ASCII).trim();
      if (v.equals("max")) {
        return -1;
      }
      long n = Long.parseLong(v);
      return n >= 1L << 62 ? -1 : n;
    } catch (IOException | NumberFormatException e) {
      return -1;
    }
  }

  /** Removes a cgroup directory; the kernel refuses while tasks remain, so retry briefly. */
  static void rmdir(Path dir) {
    for (int attempt = 0; attempt < 20; attempt++) {
      try {
        Files.deleteIfExists(dir);
        return;
      } catch (IOException e) {
        try {
          Thread.sleep(50);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
    LOG.warn("cgroup {} could not be removed (tasks still in it?)", dir);
  }

  static void checkName(String what, String value) {
    if (value.isEmpty() || !value.matches("[A-Za-z0-9._/-]+") || value.contains("..")) {
      throw new IllegalArgumentException(
          what
              + " must be a relative cgroup path of [A-Za-z0-9._-/] without '..', got '"
              + value
              + "'");
    }
  }
}
