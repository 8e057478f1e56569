package io.efscsi.proxy.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.UnsynchronizedAppenderBase;
import ch.qos.logback.core.spi.ContextAwareBase;
import java.time.Instant;
import org.slf4j.Logger;

/**
 * The proxy's logging, set up in code instead of from XML: Logback's XML configurator loads about
 * 600 classes (Joran, the XML parser, the pattern engine), a quarter of what a proxy process loads,
 * each of them metaspace in every proxy. Found through {@code META-INF/services} and active only
 * when {@code -Defscsi.proxy.log=stderr} is set (the proxy's jvm.options), so the driver's JVM,
 * which has the same jar on its classpath, keeps its own logback.xml.
 *
 * <p>Output: one line per event on stderr, {@code <UTC time> <LEVEL> <logger> - <message>}, INFO
 * for io.efscsi and WARN for the libraries.
 */
public final class StderrLogging extends ContextAwareBase implements Configurator {

  /** The system property that turns this configurator on. */
  public static final String PROPERTY = "efscsi.proxy.log";

  @Override
  public ExecutionStatus configure(LoggerContext context) {
    if (!"stderr".equals(System.getProperty(PROPERTY))) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    Appender appender = new Appender();
    appender.setContext(context);
    appender.setName("stderr");
    appender.start();
    ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.WARN);
    root.addAppender(appender);
    context.getLogger("io.efscsi").setLevel(Level.INFO);
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }

  /** Formats one event the way the proxy's log always looked. */
  static String format(ILoggingEvent e) {
    String name = e.getLoggerName();
    StringBuilder sb = new StringBuilder(96);
    sb.append(Instant.ofEpochMilli(e.getTimeStamp())).append(' ').append(e.getLevel().toString());
    for (int i = e.getLevel().toString().length(); i < 5; i++) {
      sb.append(' ');
    }
    sb.append(' ')
        .append(name, name.lastIndexOf('.') + 1, name.length())
        .append(" - ")
        .append(e.getFormattedMessage())
        .append(System.lineSeparator());
    IThrowableProxy t = e.getThrowableProxy();
    if (t != null) {
      sb.append(ThrowableProxyUtil.asString(t)).append(System.lineSeparator());
    }
    return sb.toString();
  }

  private static final class Appender extends UnsynchronizedAppenderBase<ILoggingEvent> {
    @Override
    protected void append(ILoggingEvent event) {
      System.err.print(format(event));
    }
  }
}
