package io.efscsi.common.config;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;

/** Parsed flag values, typed; a flag not given has its default. */
public final class Flags {

  private final Map<String, Flag> defined;
  private final Map<String, String> given;

  Flags(Map<String, Flag> defined, Map<String, String> given) {
    this.defined = Map.copyOf(defined);
    this.given = Map.copyOf(given);
  }

  /** Builds values from a map of flag name to text, checked as on a command line (for tests). */
  public static Flags of(FlagSet set, Map<String, String> values) throws UsageException {
    for (Map.Entry<String, String> e : values.entrySet()) {
      Flag f = set.flags().get(e.getKey());
      if (f == null) {
        throw new UsageException("unknown flag '--" + e.getKey() + "'");
      }
      FlagSet.check(f, e.getValue());
    }
    return new Flags(set.flags(), values);
  }

  public boolean isSet(String name) {
    return given.containsKey(flag(name).name());
  }

  public String string(String name) {
    Flag f = flag(name);
    return given.getOrDefault(f.name(), f.defaultValue());
  }

  public boolean bool(String name) {
    return parseBool(string(name));
  }

  public long integer(String name) {
    return Long.parseLong(string(name).strip());
  }

  public double number(String name) {
    return Double.parseDouble(string(name).strip());
  }

  public Duration duration(String name) {
    return GoDuration.parse(string(name));
  }

  private Flag flag(String name) {
    Flag f = defined.get(name);
    if (f == null) {
      throw new IllegalArgumentException("no such flag defined: " + name);
    }
    return f;
  }

  /** Go's {@code strconv.ParseBool}: 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False. */
  static boolean parseBool(String v) {
    return switch (v.strip()) {
      case "1", "t", "T", "TRUE", "true", "True" -> true;
      case "0", "f", "F", "FALSE", "false", "False" -> false;
      default -> throw new IllegalArgumentException("not a boolean: " + v.toLowerCase(Locale.ROOT));
    };
  }
}
