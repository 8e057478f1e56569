package io.efscsi.proxy.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator.ExecutionStatus;
import ch.qos.logback.classic.spi.LoggingEvent;
import org.junit.jupiter.api.Test;

class StderrLoggingTest {

  private static LoggingEvent event(
      String logger, Level level, String message, Throwable t, Object... args) {
    return new LoggingEvent("fqcn", new LoggerContext().getLogger(logger), level, message, t, args);
  }

  @Test
  void oneLineWithUtcTimeLevelShortLoggerNameAndMessage() {
    LoggingEvent e = event("io.efscsi.proxy.ProxyMain", Level.INFO, "listening on {}", null, 20049);
    e.setTimeStamp(1_700_000_000_123L);
    assertEquals(
        "2023-11-14T22:13:20.123Z INFO  ProxyMain - listening on 20049" + System.lineSeparator(),
        StderrLogging.format(e));
  }

  @Test
  void aThrowableFollowsTheLine() {
    LoggingEvent e = event("x.Y", Level.ERROR, "failed", new IllegalStateException("boom"));
    String out = StderrLogging.format(e);
    assertTrue(out.contains("ERROR Y - failed"), out);
    assertTrue(out.contains("java.lang.IllegalStateException: boom"), out);
  }

  @Test
  void leavesTheDriversJvmToItsOwnConfigurationUnlessAskedFor() {
    StderrLogging configurator = new StderrLogging();
    LoggerContext context = new LoggerContext();
    String before = System.getProperty(StderrLogging.PROPERTY);
    try {
      System.clearProperty(StderrLogging.PROPERTY);
      assertEquals(ExecutionStatus.INVOKE_NEXT_IF_ANY, configurator.configure(context));
      System.setProperty(StderrLogging.PROPERTY, "stderr");
      assertEquals(ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY, configurator.configure(context));
      assertEquals(Level.WARN, context.getLogger("ROOT").getLevel());
      assertEquals(Level.INFO, context.getLogger("io.efscsi").getLevel());
    } finally {
      if (before == null) {
        System.clearProperty(StderrLogging.PROPERTY);
      } else {
        System.setProperty(StderrLogging.PROPERTY, before);
      }
    }
  }
}
