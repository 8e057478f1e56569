package io.efscsi.launcher;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.FileAppender;
import java.nio.file.Path;
import org.slf4j.LoggerFactory;

/** Maps klog verbosity to Logback levels: 0-3 INFO, 4-5 DEBUG, 6+ TRACE for our code. */
final class Logging {

  private Logging() {}

  static void configure(int verbosity) {
    LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
    Level level = verbosity >= 6 ? Level.TRACE : verbosity >= 4 ? Level.DEBUG : Level.INFO;
    ctx.getLogger("io.efscsi").setLevel(level);
  }

  static void quiet() {
    LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
    ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).setLevel(Level.WARN);
    ctx.getLogger("io.efscsi").setLevel(Level.WARN);
  }

  /** Every log line to {@code file} (truncated first) instead of stderr. */
  static void toFile(Path file) {
    LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
    FileAppender<ILoggingEvent> appender = new FileAppender<>();
    appender.setContext(ctx);
    appender.setName("DEMO");
    appender.setFile(file.toString());
    appender.setAppend(false);
    appender.setEncoder(LogConfigurator.encoder(ctx));
    appender.start();
    ch.qos.logback.classic.Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.detachAndStopAllAppenders();
    root.addAppender(appender);
    ctx.getLogger("io.efscsi").setLevel(Level.INFO);
  }
}
