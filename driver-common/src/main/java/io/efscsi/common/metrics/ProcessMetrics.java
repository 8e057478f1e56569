package io.efscsi.common.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.ToDoubleFunction;
import java.util.stream.Stream;

/**
 * The plugin process's own metrics, from {@code /proc/self} and {@link Runtime}, under the names of
 * the Prometheus process collector (which the Go driver's {@code /metrics} has too): {@code
 * process_cpu_seconds_total}, {@code process_resident_memory_bytes}, {@code
 * process_virtual_memory_bytes}, {@code process_open_fds}, {@code process_max_fds}, {@code
 * process_start_time_seconds}, plus {@code process_threads}, {@code system_cpu_count}, {@code
 * system_load_average_1m} and the Java heap as {@code jvm_memory_{used,committed,max}_bytes{area=
 * "heap"}}.
 *
 * <p>Micrometer's JVM binders read the same through the platform MBean server, whose first use
 * loads some 300 classes (JMX, the management beans, JFR's type library) into a plugin that would
 * otherwise never touch them; this binder loads none. A value that cannot be read is NaN.
 */
public final class ProcessMetrics implements MeterBinder {

  /** Linux's USER_HZ: the unit of utime and stime in {@code /proc/<pid>/stat}. */
  private static final double TICKS_PER_SECOND = 100;

  private final Path proc;

  /** The process's own {@code /proc/self}. */
  public ProcessMetrics() {
    this(Path.of("/proc/self"));
  }

  /** {@code proc}: a {@code /proc/<pid>} directory (its status, stat, limits and fd). */
  public ProcessMetrics(Path proc) {
    this.proc = proc;
  }

  @Override
  public void bindTo(MeterRegistry registry) {
    Runtime rt = Runtime.getRuntime();
    heap(registry, "jvm.memory.used", rt, r -> r.totalMemory() - r.freeMemory());
    heap(registry, "jvm.memory.committed", rt, Runtime::totalMemory);
    heap(registry, "jvm.memory.max", rt, Runtime::maxMemory);
    FunctionCounter.builder("process.cpu", this, ProcessMetrics::cpuSeconds)
        .baseUnit("seconds")
        .description("user and system CPU time of the process")
        .register(registry);
    Gauge.builder("process.resident.memory", this, m -> m.statusKb("VmRSS:") * 1024)
        .baseUnit("bytes")
        .description("resident memory of the process")
        .register(registry);
    Gauge.builder("process.virtual.memory", this, m -> m.statusKb("VmSize:") * 1024)
        .baseUnit("bytes")
        .description("virtual memory of the process")
        .register(registry);
    Gauge.builder("process.threads", this, m -> m.statusKb("Threads:"))
        .description("threads of the process, the JVM's own included")
        .register(registry);
    Gauge.builder("process.open.fds", this, ProcessMetrics::openFds)
        .description("open file descriptors")
        .register(registry);
    Gauge.builder("process.max.fds", this, ProcessMetrics::maxFds)
        .description("the soft limit of open file descriptors")
        .register(registry);
    double start =
        ProcessHandle.current()
            .info()
            .startInstant()
            .map(i -> i.toEpochMilli() / 1000.0)
            .orElse(Double.NaN);
    Gauge.builder("process.start.time", () -> start)
        .baseUnit("seconds")
        .description("start of the process, seconds since the epoch")
        .register(registry);
    Gauge.builder("system.cpu.count", rt, Runtime::availableProcessors)
        .description("processors available to the JVM")
        .register(registry);
    Gauge.builder("system.load.average.1m", this, ProcessMetrics::loadAverage)
        .description("the system's load average over the last minute")
        .register(registry);
  }

  private static void heap(
      MeterRegistry registry, String name, Runtime rt, ToDoubleFunction<Runtime> value) {
    Gauge.builder(name, rt, value)
        .tag("area", "heap")
        .tag("id", "heap")
        .baseUnit("bytes")
        .register(registry);
  }

  /** A field of {@code status} (kB for the memory ones), NaN when absent. */
  double statusKb(String key) {
    for (String line : lines(proc.resolve("status"))) {
      if (line.startsWith(key)) {
        String digits = line.substring(key.length()).replaceAll("[^0-9]", "");
        return digits.isEmpty() ? Double.NaN : Double.parseDouble(digits);
      }
    }
    return Double.NaN;
  }

  /** utime + stime of {@code stat}, in seconds. */
  double cpuSeconds() {
    List<String> stat = lines(proc.resolve("stat"));
    if (stat.isEmpty()) {
      return Double.NaN;
    }
    String line = stat.getFirst();
    // the command name (field 2) may hold spaces and parentheses: fields count from the last ')'
    String[] f = line.substring(line.lastIndexOf(')') + 1).trim().split(" +");
    if (f.length < 13) {
      return Double.NaN;
    }
    return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICKS_PER_SECOND;
  }

  double openFds() {
    try (Stream<Path> fds = Files.list(proc.resolve("fd"))) {
      return fds.count();
    } catch (IOException | RuntimeException e) {
      return Double.NaN;
    }
  }

  /** The soft limit of "Max open files" in {@code limits}. */
  double maxFds() {
    for (String line : lines(proc.resolve("limits"))) {
      if (line.startsWith("Max open files")) {
        String[] f = line.substring("Max open files".length()).trim().split(" +");
        return f[0].equals("unlimited") ? Double.POSITIVE_INFINITY : Double.parseDouble(f[0]);
      }
    }
    return Double.NaN;
  }

  double loadAverage() {
    List<String> l = lines(proc.resolve("../loadavg").normalize());
    return l.isEmpty() ? Double.NaN : Double.parseDouble(l.getFirst().split(" ")[0]);
  }

  private static List<String> lines(Path file) {
    try {
      return Files.readAllLines(file);
    } catch (IOException | RuntimeException e) {
      return List.of();
    }
  }
}
