package io.efscsi.common.config;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A set of flags parsed with Go's {@code flag} package rules, so the Go driver's manifests work
 * unchanged: {@code -name} or {@code --name}, a value as {@code --name=value} or {@code --name
 * value}, and booleans as {@code --name} or {@code --name=false}. Values are checked against the
 * flag's type while parsing; anything wrong is a {@link UsageException} naming the flag and what it
 * accepts.
 */
public final class FlagSet {

  private final Map<String, Flag> flags = new TreeMap<>();

  public FlagSet add(Flag flag) {
    if (flags.putIfAbsent(flag.name(), flag) != null) {
      throw new IllegalStateException("flag defined twice: " + flag.name());
    }
    return this;
  }

  public FlagSet addAll(List<Flag> all) {
    all.forEach(this::add);
    return this;
  }

  public Map<String, Flag> flags() {
    return java.util.Collections.unmodifiableMap(flags);
  }

  /** Parses every argument; positional arguments are refused. */
  public Flags parse(List<String> args) throws UsageException {
    Map<String, String> values = new LinkedHashMap<>();
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      if (arg.equals("--")) {
        if (i + 1 < args.size()) {
          throw new UsageException("unexpected argument '" + args.get(i + 1) + "'");
        }
        break;
      }
      if (!arg.startsWith("-") || arg.equals("-")) {
        throw new UsageException(
            "unexpected argument '" + arg + "': flags are written --name=value");
      }
      String body = arg.startsWith("--") ? arg.substring(2) : arg.substring(1);
      String name = body;
      String value = null;
      int eq = body.indexOf('=');
      if (eq >= 0) {
        name = body.substring(0, eq);
        value = body.substring(eq + 1);
      }
      Flag flag = flags.get(name);
      if (flag == null) {
        throw new UsageException(
            "unknown flag '--" + name + "'; accepted flags: " + acceptedNames());
      }
      if (value == null) {
        if (flag.type() == Flag.Type.BOOL) {
          value = "true";
        } else if (i + 1 < args.size()) {
          value = args.get(++i);
        } else {
          throw new UsageException("flag '--" + name + "' needs a value: " + flag.type().expected);
        }
      }
      check(flag, value);
      values.put(name, value);
    }
    return new Flags(flags, values);
  }

  private String acceptedNames() {
    return String.join(", ", flags.keySet().stream().map(n -> "--" + n).toList());
  }

  static void check(Flag flag, String value) throws UsageException {
    try {
      switch (flag.type()) {
        case BOOL -> Flags.parseBool(value);
        case INT -> Long.parseLong(value.strip());
        case FLOAT -> Double.parseDouble(value.strip());
        case DURATION -> GoDuration.parse(value);
        case STRING -> {}
      }
    } catch (IllegalArgumentException e) {
      throw new UsageException(
          "invalid value '"
              + value
              + "' for flag '--"
              + flag.name()
              + "': expected "
              + flag.type().expected);
    }
  }

  /** Help text: one line a flag, sorted by name. */
  public String usage() {
    List<String> lines = new ArrayList<>();
    for (Flag f : flags.values()) {
      String def = f.defaultValue().isEmpty() ? "" : " (default " + f.defaultValue() + ")";
      lines.add(String.format("  --%-40s %s%s", f.name(), f.usage(), def));
    }
    return String.join("\n", lines);
  }
}
