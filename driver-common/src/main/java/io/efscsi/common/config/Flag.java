package io.efscsi.common.config;

/**
 * One command-line flag, named as the Go driver names it so its manifests keep working.
 *
 * @param name without leading dashes
 * @param type how the value is parsed
 * @param defaultValue the value when the flag is absent, in the flag's text form
 * @param usage one line for {@code --help}
 */
public record Flag(String name, Type type, String defaultValue, String usage) {

  /** Value types, with Go's {@code flag} package syntax. */
  public enum Type {
    BOOL("true or false"),
    STRING("a string"),
    INT("an integer"),
    FLOAT("a number"),
    DURATION("a duration such as 30s, 5m or 1h30m");

    final String expected;

    Type(String expected) {
      this.expected = expected;
    }
  }

  public static Flag bool(String name, boolean defaultValue, String usage) {
    return new Flag(name, Type.BOOL, Boolean.toString(defaultValue), usage);
  }

  public static Flag string(String name, String defaultValue, String usage) {
    return new Flag(name, Type.STRING, defaultValue, usage);
  }

  public static Flag integer(String name, long defaultValue, String usage) {
    return new Flag(name, Type.INT, Long.toString(defaultValue), usage);
  }

  public static Flag number(String name, double defaultValue, String usage) {
    return new Flag(name, Type.FLOAT, Double.toString(defaultValue), usage);
  }

  public static Flag duration(String name, String defaultValue, String usage) {
    return new Flag(name, Type.DURATION, defaultValue, usage);
  }
}
