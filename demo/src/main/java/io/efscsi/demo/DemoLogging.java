package io.efscsi.demo;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.FileAppender;
import ch.qos.logback.core.OutputStreamAppender;
import java.nio.file.Path;
import org.slf4j.LoggerFactory;

/**
 * The demo's logging: quiet, or every line to a file. The driver's own set-up (the launcher's
 * {@code LogConfigurator}, found by Logback on the product's class path) has already made the
 * {@code STDERR} appender; the file gets that appender's encoder, so its lines look the same.
 */
final class DemoLogging {

  private DemoLogging() {}

  static void quiet() {
    LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
    ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).setLevel(Level.WARN);
    ctx.getLogger("io.efscsi").setLevel(Level.WARN);
  }

  /**
   * Every log line to {@code file} (truncated first) instead of stderr. Under a configuration of
   * the user's own ({@code -Dlogback.configurationFile}) there is no {@code STDERR} appender of
   * ours and logging stays as configured.
   */
  static void toFile(Path file) {
    LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
    ch.qos.logback.classic.Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    Appender<ILoggingEvent> stderr = root.getAppender("STDERR");
    if (!(stderr instanceof OutputStreamAppender<ILoggingEvent> console)) {
      return;
    }
    FileAppender<ILoggingEvent> appender = new FileAppender<>();
    appender.setContext(ctx);
    appender.setName("DEMO");
    appender.setFile(file.toString());
    appender.setAppend(false);
    appender.setEncoder(console.getEncoder());
    appender.start();
    root.detachAppender(console); // detached, not stopped: its encoder now serves the file
    root.addAppender(appender);
    ctx.getLogger("io.efscsi").setLevel(Level.INFO);
  }
}
