package io.efscsi.common.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProcessMetricsTest {

  @TempDir Path tmp;

  private static double value(String scrape, String series) {
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(scrape);
    assertTrue(m.find(), () -> series + " not in\n" + scrape);
    return Double.parseDouble(m.group(1));
  }

  @Test
  void aProcDirectoryIsReadFieldByField() throws Exception {
    Path self = Files.createDirectories(tmp.resolve("proc/self"));
    Files.writeString(
        self.resolve("status"),
        "Name:\tjava\nVmSize:\t 2048000 kB\nVmRSS:\t   91234 kB\nThreads:\t27\n");
    // a command name with a space and a parenthesis: fields count from the last ')'
    Files.writeString(
        self.resolve("stat"),
        "4242 (we ird) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 566 0 0 20 0 27 0\n");
    Files.writeString(
        self.resolve("limits"),
        "Limit                     Soft Limit           Hard Limit           Units\n"
            + "Max open files            1048576              1048576              files\n");
    Files.createDirectories(self.resolve("fd"));
    for (int i = 0; i < 7; i++) {
      Files.writeString(self.resolve("fd/" + i), "");
    }
    Files.writeString(tmp.resolve("proc/loadavg"), "0.42 0.30 0.20 1/200 4242\n");
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new ProcessMetrics(self).bindTo(registry);
    String scrape = registry.scrape();

    assertEquals(91234.0 * 1024, value(scrape, "process_resident_memory_bytes"));
    assertEquals(2048000.0 * 1024, value(scrape, "process_virtual_memory_bytes"));
    assertEquals(27, value(scrape, "process_threads"));
    assertEquals(18.0, value(scrape, "process_cpu_seconds_total"), 1e-9); // (1234 + 566) / 100
    assertEquals(7, value(scrape, "process_open_fds"));
    assertEquals(1048576, value(scrape, "process_max_fds"));
    assertEquals(0.42, value(scrape, "system_load_average_1m"));
  }

  @Test
  void missingFilesReadAsNotANumberNotAnError() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new ProcessMetrics(tmp.resolve("gone/self")).bindTo(registry);
    String scrape = registry.scrape();
    assertTrue(Double.isNaN(value(scrape, "process_resident_memory_bytes")), scrape);
    assertTrue(Double.isNaN(value(scrape, "process_open_fds")), scrape);
  }

  @Test
  void thisProcessesOwnFiguresAreConsistent() {
    PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    new ProcessMetrics().bindTo(registry);
    String before = registry.scrape();
    long spin = System.nanoTime() + 300_000_000L;
    double sink = 0;
    while (System.nanoTime() < spin) {
      sink += Math.sqrt(sink + 1);
    }
    String after = registry.scrape();
    assertTrue(sink > 0);
    assertTrue(
        value(after, "process_cpu_seconds_total") > value(before, "process_cpu_seconds_total"),
        "CPU time grows while this thread spins");
    double rss = value(after, "process_resident_memory_bytes");
    double used = value(after, "jvm_memory_used_bytes{area=\"heap\",id=\"heap\"}");
    double committed = value(after, "jvm_memory_committed_bytes{area=\"heap\",id=\"heap\"}");
    double max = value(after, "jvm_memory_max_bytes{area=\"heap\",id=\"heap\"}");
    assertTrue(0 < used && used <= committed && committed <= max, after);
    assertTrue(rss > 8 << 20, "a JVM's RSS is more than 8 MiB: " + rss);
    assertTrue(value(after, "process_open_fds") >= 3, after);
    assertTrue(value(after, "process_threads") >= 2, after);
    double start = value(after, "process_start_time_seconds");
    assertTrue(start > 1.7e9 && start <= System.currentTimeMillis() / 1000.0, after);
    assertEquals(Runtime.getRuntime().availableProcessors(), value(after, "system_cpu_count"));
  }
}
