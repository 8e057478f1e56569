package io.efscsi.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;

/**
 * Rows of the time table {@code scripts/test} prints at the end of every run ({@code
 * scripts/test-times}): a suite's own phases, those the test reports cannot show (the kernel VM's
 * boot and each scenario inside it, each cluster start, each image build). Appended to the file
 * named by {@code EFSCSI_TEST_TIMES} (scripts/test sets it), one {@code seconds<TAB>phase<TAB>part
 * of<TAB>note} line each; also printed to stderr, so a run outside scripts/test still shows them.
 */
final class TestTimes {

  private TestTimes() {}

  /** {@code phase} took {@code seconds}, inside {@code partOf} (a phase or a test class). */
  static synchronized void record(String phase, String partOf, double seconds, String note) {
    String line =
        String.format(Locale.ROOT, "%.1f\t%s\t%s\t%s%n", seconds, phase, partOf, clean(note));
    System.err.print("test time: " + line);
    String file = System.getenv("EFSCSI_TEST_TIMES");
    if (file == null || file.isBlank()) {
      return;
    }
    try {
      Files.writeString(
          Path.of(file),
          line,
          StandardCharsets.UTF_8,
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      System.err.println("test time not recorded in " + file + ": " + e);
    }
  }

  /** {@link #record} of the time since {@code startNanos} ({@link System#nanoTime}). */
  static void since(String phase, String partOf, long startNanos, String note) {
    record(phase, partOf, (System.nanoTime() - startNanos) / 1e9, note);
  }

  private static String clean(String s) {
    return s == null ? "" : s.replace('\t', ' ').replace('\n', ' ');
  }
}
