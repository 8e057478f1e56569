package io.efscsi.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Commands as docs/ prints them, read from the Markdown itself so that a test runs what an operator
 * copies (not a copy of it that could drift), and run with bash, the suite's kubectl on the PATH.
 */
final class DocCommands {

  static final Path DOCS = Path.of("../docs").toAbsolutePath().normalize();
  static final Path REPO = Path.of("..").toAbsolutePath().normalize();
  static final Path KUBECTL_DIR = REPO.resolve(".tools/kubectl");
  static final Path HELM_DIR = REPO.resolve(".tools/helm");

  private DocCommands() {}

  /** One command line, with the comment after it (what the docs say it answers), if any. */
  record Line(String command, String comment) {}

  /**
   * What bash printed on stdout (the answer) and stderr (kubectl's warnings), and its exit code.
   */
  record Ran(int exit, String output, String errors) {
    @Override
    public String toString() {
      return "exit " + exit + ": " + output + (errors.isEmpty() ? "" : " (stderr: " + errors + ")");
    }
  }

  /** The lines of the first {@code sh} block of {@code doc} that holds {@code marker}. */
  static List<Line> block(String doc, String marker) throws IOException {
    String text = Files.readString(DOCS.resolve(doc));
    Matcher m = Pattern.compile("(?ms)^ *```sh\\n(.*?)^ *```").matcher(text);
    while (m.find()) {
      if (m.group(1).contains(marker)) {
        List<Line> lines = new ArrayList<>();
        for (String raw : m.group(1).split("\n")) {
          String l = raw.strip();
          if (l.isEmpty() || l.startsWith("#")) {
            continue;
          }
          int hash = l.indexOf("   #");
          lines.add(
              hash < 0
                  ? new Line(l, "")
                  : new Line(l.substring(0, hash).strip(), l.substring(hash + 4).strip()));
        }
        return lines;
      }
    }
    throw new AssertionError(doc + " has no sh block with " + marker);
  }

  /** The inline code span of {@code doc} that starts with {@code start}, as one line. */
  static String inline(String doc, String start) throws IOException {
    Matcher m =
        Pattern.compile("`(" + Pattern.quote(start) + "[^`]*)`")
            .matcher(Files.readString(DOCS.resolve(doc)));
    if (!m.find()) {
      throw new AssertionError(doc + " has no `" + start + "…`");
    }
    return m.group(1).replaceAll("\\s*\\n\\s*", " "); // a span wrapped in the source is one line
  }

  /**
   * The first {@code sh} block of {@code doc} that holds {@code marker}, as bash reads it: comment
   * lines dropped, continued lines ({@code \\} at the end) joined.
   */
  static String script(String doc, String marker) throws IOException {
    String text = Files.readString(DOCS.resolve(doc));
    Matcher m = Pattern.compile("(?ms)^ *```sh\\n(.*?)^ *```").matcher(text);
    while (m.find()) {
      if (m.group(1).contains(marker)) {
        return m.group(1)
            .replaceAll("(?m)^ *#.*\\n", "")
            .replaceAll("\\\\\\n\\s*", "")
            .stripIndent();
      }
    }
    throw new AssertionError(doc + " has no sh block with " + marker);
  }

  /**
   * Runs {@code script} with bash in the repository's root (where the docs' relative paths such as
   * deploy/helm/... are), the suite's kubectl and helm first on the PATH and {@code env} set; a
   * script still running after 5 minutes is killed and fails.
   */
  static Ran run(String script, Path kubeconfig, Map<String, String> env)
      throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder("bash", "-o", "pipefail", "-c", script);
    pb.directory(REPO.toFile());
    pb.environment().put("PATH", KUBECTL_DIR + ":" + HELM_DIR + ":" + System.getenv("PATH"));
    pb.environment().put("KUBECONFIG", kubeconfig.toString());
    pb.environment().putAll(env);
    Path out = Files.createTempFile("doc-command", ".out");
    Path err = Files.createTempFile("doc-command", ".err");
    try {
      Process p = pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
      if (!p.waitFor(5, TimeUnit.MINUTES)) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly().waitFor();
        throw new AssertionError(
            "still running after 5 min: "
                + script
                + "\n"
                + Files.readString(out)
                + Files.readString(err));
      }
      return new Ran(
          p.exitValue(),
          Files.readString(out, StandardCharsets.UTF_8),
          Files.readString(err).strip());
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }
}
