package io.efscsi.it;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A PromQL parser for what dashboards and alert rules use (selectors, matchers, ranges, offsets,
 * functions, aggregations with by/without, binary operators with bool/on/ignoring/group_*): it
 * refuses what Prometheus would refuse in that subset (unknown function, unbalanced brackets, bad
 * duration or matcher) and returns the metric names the expression selects.
 */
final class PromQl {

  static final Set<String> AGGREGATIONS =
      Set.of(
          "sum",
          "min",
          "max",
          "avg",
          "count",
          "stddev",
          "stdvar",
          "topk",
          "bottomk",
          "quantile",
          "count_values",
          "group");
  static final Set<String> FUNCTIONS =
      Set.of(
          "rate",
          "irate",
          "increase",
          "delta",
          "idelta",
          "deriv",
          "histogram_quantile",
          "abs",
          "absent",
          "absent_over_time",
          "ceil",
          "floor",
          "round",
          "clamp",
          "clamp_min",
          "clamp_max",
          "max_over_time",
          "min_over_time",
          "avg_over_time",
          "sum_over_time",
          "count_over_time",
          "last_over_time",
          "changes",
          "resets",
          "label_replace",
          "time",
          "vector",
          "scalar",
          "sort",
          "sort_desc",
          "predict_linear",
          "timestamp");
  static final Set<String> BINARY_WORDS = Set.of("and", "or", "unless");
  private static final Pattern TOKEN =
      Pattern.compile(
          "\\s*(?:(?<dur>[0-9]+(?:ms|s|m|h|d|w|y)(?![A-Za-z0-9_]))|(?<num>[0-9]+(?:\\.[0-9]+)?(?:e[+-]?[0-9]+)?(?![A-Za-z0-9_.]))"
              + "|(?<id>[A-Za-z_:][A-Za-z0-9_:]*)|(?<str>\"(?:[^\"\\\\]|\\\\.)*\")"
              + "|(?<op>==|!=|>=|<=|=~|!~|[-+*/%^<>=(){}\\[\\],]))");

  private final List<String> tokens = new ArrayList<>();
  private final String text;
  private int pos;
  private final Set<String> metrics = new TreeSet<>();

  private PromQl(String text) {
    this.text = text;
    Matcher m = TOKEN.matcher(text);
    int at = 0;
    while (at < text.length()) {
      if (text.substring(at).isBlank()) {
        break;
      }
      if (!m.find(at) || m.start() != at) {
        throw error("cannot read at '" + text.substring(at) + "'");
      }
      String kind =
          m.group("num") != null
              ? "n:"
              : m.group("dur") != null
                  ? "d:"
                  : m.group("id") != null ? "i:" : m.group("str") != null ? "s:" : "o:";
      tokens.add(kind + m.group().strip());
      at = m.end();
    }
  }

  /** The metric names an expression selects; throws on a syntax error. */
  static Set<String> metricNames(String expr) {
    PromQl p = new PromQl(expr);
    p.expr();
    if (p.pos != p.tokens.size()) {
      throw p.error("unexpected '" + p.peekText() + "'");
    }
    return p.metrics;
  }

  private IllegalArgumentException error(String why) {
    return new IllegalArgumentException(why + " in: " + text);
  }

  private String peek() {
    return pos < tokens.size() ? tokens.get(pos) : "";
  }

  private String peekText() {
    String t = peek();
    return t.isEmpty() ? "end" : t.substring(2);
  }

  private String next() {
    if (pos >= tokens.size()) {
      throw error("unexpected end");
    }
    return tokens.get(pos++);
  }

  private void expect(String op) {
    String t = next();
    if (!t.equals("o:" + op)) {
      throw error("expected '" + op + "', got '" + t.substring(2) + "'");
    }
  }

  private boolean accept(String token) {
    if (peek().equals(token)) {
      pos++;
      return true;
    }
    return false;
  }

  private void expr() {
    unary();
    while (binaryOperator()) {
      accept("i:bool");
      if (accept("i:on") || accept("i:ignoring")) {
        labels();
      }
      if (accept("i:group_left") || accept("i:group_right")) {
        if (peek().equals("o:(")) {
          labels();
        }
      }
      unary();
    }
  }

  private boolean binaryOperator() {
    String t = peek();
    boolean op =
        t.startsWith("o:")
            && Set.of("+", "-", "*", "/", "%", "^", "==", "!=", ">", "<", ">=", "<=")
                .contains(t.substring(2));
    if (op || (t.startsWith("i:") && BINARY_WORDS.contains(t.substring(2)))) {
      pos++;
      return true;
    }
    return false;
  }

  private void unary() {
    if (accept("o:-") || accept("o:+")) {
      unary();
      return;
    }
    primary();
    if (accept("o:[")) {
      duration();
      if (accept("o::")) {
        duration();
      }
      expect("]");
    }
    if (accept("i:offset")) {
      duration();
    }
  }

  private void duration() {
    String t = next();
    if (!t.startsWith("d:")) {
      throw error("expected a duration, got '" + t.substring(2) + "'");
    }
  }

  private void primary() {
    String t = next();
    switch (t.substring(0, 2)) {
      case "n:", "s:" -> {}
      case "o:" -> {
        if (t.equals("o:(")) {
          expr();
          expect(")");
        } else if (t.equals("o:{")) {
          matchers();
        } else {
          throw error("unexpected '" + t.substring(2) + "'");
        }
      }
      case "i:" -> identifier(t.substring(2));
      default -> throw error("unexpected '" + t.substring(2) + "'");
    }
  }

  private void identifier(String id) {
    if (AGGREGATIONS.contains(id)) {
      if (accept("i:by") || accept("i:without")) {
        labels();
      }
      expect("(");
      expr();
      if (accept("o:,")) {
        expr();
      }
      expect(")");
      if (accept("i:by") || accept("i:without")) {
        labels();
      }
    } else if (peek().equals("o:(")) {
      if (!FUNCTIONS.contains(id)) {
        throw error("unknown function '" + id + "'");
      }
      pos++;
      if (!accept("o:)")) {
        expr();
        while (accept("o:,")) {
          expr();
        }
        expect(")");
      }
    } else {
      metrics.add(id);
      if (accept("o:{")) {
        matchers();
      }
    }
  }

  private void matchers() {
    while (!accept("o:}")) {
      String label = next();
      if (!label.startsWith("i:")) {
        throw error("expected a label name, got '" + label.substring(2) + "'");
      }
      String op = next();
      if (!Set.of("o:=", "o:!=", "o:=~", "o:!~").contains(op)) {
        throw error("expected a matcher operator after " + label.substring(2));
      }
      String value = next();
      if (!value.startsWith("s:")) {
        throw error("expected a quoted label value after " + label.substring(2));
      }
      if (!peek().equals("o:}")) {
        expect(",");
      }
    }
  }

  private void labels() {
    expect("(");
    while (!accept("o:)")) {
      String label = next();
      if (!label.startsWith("i:")) {
        throw error("expected a label name, got '" + label.substring(2) + "'");
      }
      if (!peek().equals("o:)")) {
        expect(",");
      }
    }
  }
}
