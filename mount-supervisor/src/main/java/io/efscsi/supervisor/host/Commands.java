package io.efscsi.supervisor.host;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs external commands with a deadline. A command that outlives its deadline is killed and
 * reported; the caller never waits longer than the deadline (a process stuck in the kernel on a
 * dead NFS server may linger, but it no longer holds up anything of ours).
 */
public final class Commands {

  /** The outcome of a command that finished in time. */
  public record Result(int exitCode, String output) {
    public boolean ok() {
      return exitCode == 0;
    }
  }

  private Commands() {}

  /** Runs {@code command} with stderr merged into stdout; throws on timeout or start failure. */
  public static Result run(List<String> command, Duration timeout) throws IOException {
    return run(command, Map.of(), timeout);
  }

  /** As {@link #run(List, Duration)} with extra environment variables. */
  public static Result run(List<String> command, Map<String, String> env, Duration timeout)
      throws IOException {
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
    pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    pb.environment().putAll(env);
    Process p = pb.start();
    StringBuilder out = new StringBuilder();
    Thread reader =
        Thread.ofVirtual()
            .start(() -> {
              try (InputStream in = p.getInputStream()) {
                byte[] buf = in.readNBytes(64 * 1024);
                synchronized (out) {
                  out.append(new String(buf, StandardCharsets.UTF_8));
                }
                in.transferTo(java.io.OutputStream.nullOutputStream());
              } catch (IOException ignored) {
                // the process went away; what was read is kept
              }
            });
    try {
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        throw new IOException(
            "command timed out after " + timeout.toMillis() + " ms: " + String.join(" ", command));
      }
      reader.join(Duration.ofSeconds(1));
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while running " + String.join(" ", command), e);
    }
    synchronized (out) {
      return new Result(p.exitValue(), out.toString().strip());
    }
  }
}
