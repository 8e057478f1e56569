package io.efscsi.launcher;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
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
}
