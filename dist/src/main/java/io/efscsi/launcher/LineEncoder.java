package io.efscsi.launcher;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.CoreConstants;
import ch.qos.logback.core.encoder.EncoderBase;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Iterator;
import java.util.Map;

/**
 * One line per event, as {@link LogConfigurator#PATTERN} describes it: time with its offset, level
 * (padded to 5), the logger's last name segment, [thread], the MDC when there is any (" k=v,
 * k2=v2"), " - ", the message, then the stack trace of a throwable, in Logback's own format.
 * Written out rather than given to Logback's PatternLayout, whose converter registry and pattern
 * parser are some 150 classes more in every plugin JVM; {@code LineEncoderTest} holds it to
 * PatternLayout's output byte for byte.
 */
final class LineEncoder extends EncoderBase<ILoggingEvent> {

  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSXXX");

  private final ZoneId zone;

  LineEncoder() {
    this(ZoneId.systemDefault());
  }

  LineEncoder(ZoneId zone) {
    this.zone = zone;
  }

  @Override
  public byte[] headerBytes() {
    return null;
  }

  @Override
  public byte[] encode(ILoggingEvent e) {
    StringBuilder b = new StringBuilder(160);
    TIME.formatTo(Instant.ofEpochMilli(e.getTimeStamp()).atZone(zone), b);
    b.append(' ');
    String level = e.getLevel().toString();
    b.append(level);
    for (int i = level.length(); i < 5; i++) {
      b.append(' ');
    }
    b.append(' ');
    String logger = e.getLoggerName();
    b.append(logger, logger.lastIndexOf('.') + 1, logger.length());
    b.append(" [").append(e.getThreadName()).append(']');
    Map<String, String> mdc = e.getMDCPropertyMap();
    if (mdc != null && !mdc.isEmpty()) {
      b.append(' ');
      Iterator<Map.Entry<String, String>> it = mdc.entrySet().iterator();
      while (it.hasNext()) {
        Map.Entry<String, String> kv = it.next();
        b.append(kv.getKey()).append('=').append(kv.getValue());
        if (it.hasNext()) {
          b.append(", ");
        }
      }
    }
    b.append(" - ").append(e.getFormattedMessage()).append(CoreConstants.LINE_SEPARATOR);
    IThrowableProxy thrown = e.getThrowableProxy();
    if (thrown != null) {
      b.append(ThrowableProxyUtil.asString(thrown)); // each line, the last one too, ends in \n
    }
    return b.toString().getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public byte[] footerBytes() {
    return null;
  }
}
