package io.efscsi.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import java.nio.charset.StandardCharsets;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TimeZone;
import org.junit.jupiter.api.Test;

/** LineEncoder writes what Logback's PatternLayout writes for LogConfigurator.PATTERN. */
class LineEncoderTest {

  private final LoggerContext ctx = new LoggerContext();

  private String pattern(ILoggingEvent e) {
    PatternLayoutEncoder p = new PatternLayoutEncoder();
    p.setContext(ctx);
    p.setPattern(LogConfigurator.PATTERN);
    p.start();
    return new String(p.encode(e), StandardCharsets.UTF_8);
  }

  private static String ours(ILoggingEvent e, ZoneId zone) {
    return new String(new LineEncoder(zone).encode(e), StandardCharsets.UTF_8);
  }

  private LoggingEvent event(
      String logger, Level level, String msg, Object[] args, Throwable t, Map<String, String> mdc) {
    Logger l = ctx.getLogger(logger);
    LoggingEvent e = new LoggingEvent(Logger.FQCN, l, level, msg, t, args);
    e.setThreadName("grpc-default-executor-3");
    e.setTimeStamp(1_795_000_123_456L);
    e.setMDCPropertyMap(mdc);
    return e;
  }

  @Test
  void everyShapeOfEventIsWrittenAsThePatternWritesIt() {
    Map<String, String> mdc = new LinkedHashMap<>();
    mdc.put("volume", "fs-0123456789abcdef");
    mdc.put("port", "20049");
    Exception cause = new IllegalStateException("inner");
    Exception thrown = new java.io.IOException("outer", cause);
    List<LoggingEvent> events =
        List.of(
            event(
                "io.efscsi.node.NodeService",
                Level.INFO,
                "staged {}",
                new Object[] {"v"},
                null,
                Map.of()),
            event(
                "io.efscsi.node.NodeService",
                Level.WARN,
                "two {} {}",
                new Object[] {1, "x"},
                null,
                mdc),
            event("Root", Level.ERROR, "failed", null, thrown, Map.of("k", "v")),
            event("a.b.C$Inner", Level.DEBUG, "ünïcode ✓", null, null, Map.of()),
            event("x.Y", Level.TRACE, "", null, null, Map.of()));
    TimeZone saved = TimeZone.getDefault();
    for (String zone : List.of("UTC", "Europe/Berlin", "America/St_Johns")) {
      TimeZone.setDefault(TimeZone.getTimeZone(zone));
      try {
        for (LoggingEvent e : events) {
          assertEquals(pattern(e), ours(e, ZoneId.of(zone)), zone + ": " + e.getMessage());
        }
      } finally {
        TimeZone.setDefault(saved);
      }
    }
  }
}
