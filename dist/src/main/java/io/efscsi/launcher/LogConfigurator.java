package io.efscsi.launcher;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.encoder.Encoder;
import ch.qos.logback.core.spi.ContextAwareBase;
import java.util.Map;

/**
 * The driver's logging, set up in code (found by Logback through {@code
 * META-INF/services/ch.qos.logback.classic.spi.Configurator}): one line per event on stderr (stdout
 * is kept for command output such as {@code version} and {@code demo}), our code at INFO, gRPC and
 * Netty at WARN. A {@code logback.xml} would do the same through Logback's XML configurator, whose
 * ~350 classes (Joran, its model, the JDK's XML parser) every plugin JVM would load and keep. A
 * file named by {@code -Dlogback.configurationFile} (through {@code EFS_CSI_JAVA_OPTS}) still
 * replaces all of this.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_NORMAL_PRIORITY)
public final class LogConfigurator extends ContextAwareBase implements Configurator {

  /** Time, level, logger, thread, MDC (when any), message: what {@link LineEncoder} writes. */
  static final String PATTERN =
      "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level %logger{0} [%thread]%replace( %mdc){' $',''}"
          + " - %msg%n";

  private static final Map<String, Level> LEVELS =
      Map.of(
          "io.efscsi", Level.INFO,
          "io.grpc", Level.WARN,
          "io.netty", Level.WARN,
          // grpc-netty asks for SO_KEEPALIVE on unix sockets too, where it means nothing
          "io.netty.bootstrap", Level.ERROR,
          "software.amazon", Level.WARN);

  @Override
  public ExecutionStatus configure(LoggerContext ctx) {
    if (System.getProperty("logback.configurationFile") != null) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
    stderr.setContext(ctx);
    stderr.setName("STDERR");
    stderr.setTarget("System.err");
    stderr.setEncoder(encoder(ctx));
    stderr.start();
    ch.qos.logback.classic.Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.INFO);
    root.addAppender(stderr);
    LEVELS.forEach((name, level) -> ctx.getLogger(name).setLevel(level));
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }

  /**
   * The encoder of every appender of ours (stderr, the demo's log file): {@link LineEncoder}, which
   * writes what {@link #PATTERN} describes.
   */
  static Encoder<ILoggingEvent> encoder(LoggerContext ctx) {
    LineEncoder encoder = new LineEncoder();
    encoder.setContext(ctx);
    encoder.start();
    return encoder;
  }
}
