package io.efscsi.supervisor.host;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import jnr.constants.platform.Errno;
import jnr.constants.platform.OpenFlags;
import jnr.constants.platform.Signal;
import jnr.constants.platform.WaitFlags;
import jnr.posix.POSIX;
import jnr.posix.SpawnFileAction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Long-lived child processes (the proxies), started with {@code posix_spawn} and reaped by one
 * waiter thread for all of them. The JDK's {@link ProcessBuilder} keeps a reaper thread blocked in
 * {@code waitpid} for every live child (benchmarks/node.py: a thread and about 110 KiB of the
 * plugin per proxy); here one thread polls the children with {@code waitpid(pid, WNOHANG)}, never
 * {@code waitpid(-1)}, so the short commands that still run through ProcessBuilder (mount, umount)
 * keep their own exit statuses.
 *
 * <p>Like the JDK's own spawn helper, a child first runs a small prelude ({@code bash}) that
 * changes to its working directory and closes every descriptor it inherited above 2 before it execs
 * the command: posix_spawn passes on every descriptor not marked close-on-exec, and most of the
 * JDK's are not (a proxy holding the plugin's listening or API sockets would keep them open after
 * the plugin is gone). The prelude execs, so the pid is the command's. Its failures exit {@value
 * #EXIT_PRELUDE_FAILED}.
 */
public final class Children {

  private static final Logger LOG = LoggerFactory.getLogger(Children.class);

  /** Exit code of the prelude when it cannot enter the working directory. */
  public static final int EXIT_PRELUDE_FAILED = 96;

  /**
   * The descriptor a child inherits when it is given one (a listening socket: rolling upgrades).
   */
  public static final int INHERITED_FD = 3;

  /** Tells the child (and the prelude) that descriptor {@value #INHERITED_FD} is meant for it. */
  public static final String INHERITED_FD_ENV = "EFSCSI_LISTEN_FD";

  static final String PRELUDE =
      "cd -- \"$1\" || exit "
          + EXIT_PRELUDE_FAILED
          + "; shift; for f in /proc/$$/fd/*; do n=${f##*/};"
          + " if [ \"$n\" -gt 2 ] && [ \"$n\" != \"${"
          + INHERITED_FD_ENV
          + ":-}\" ]; then eval \"exec $n>&-\"; fi; done; exec \"$@\"";

  private final POSIX posix;
  private final String bash;
  private final Duration poll;
  private final Map<Long, CompletableFuture<Integer>> waiting = new ConcurrentHashMap<>();
  private Thread waiter;

  /**
   * @param posix the native binding ({@link Posix#get()})
   * @param bash the shell that runs the prelude
   * @param poll how often the waiter looks at the live children (the delay before an exit is seen)
   */
  public Children(POSIX posix, String bash, Duration poll) {
    this.posix = posix;
    this.bash = bash;
    this.poll = poll;
  }

  /** On the host's binding, {@code /bin/bash}, every 50 ms. */
  public static Children onThisHost() {
    return new Children(Posix.get(), "/bin/bash", Duration.ofMillis(50));
  }

  /**
   * Starts {@code command} in {@code dir} with exactly {@code env}, stdin from /dev/null, stdout
   * and stderr appended to {@code output} (created 0644 when missing).
   */
  public Child spawn(List<String> command, Path dir, Map<String, String> env, Path output)
      throws IOException {
    return spawn(command, dir, env, output, java.util.OptionalInt.empty());
  }

  /**
   * As {@link #spawn(List, Path, Map, Path)}; with {@code inherit}, that descriptor of this process
   * becomes the child's {@value #INHERITED_FD} and {@value #INHERITED_FD_ENV} tells the child so
   * (the prelude closes every other one). The caller still owns and closes its own descriptor.
   */
  public Child spawn(
      List<String> command,
      Path dir,
      Map<String, String> env,
      Path output,
      java.util.OptionalInt inherit)
      throws IOException {
    if (command.isEmpty()) {
      throw new IllegalArgumentException("no command to spawn");
    }
    List<String> argv = new ArrayList<>(List.of(bash, "-c", PRELUDE, "efs-csi-spawn"));
    argv.add(dir.toString());
    argv.addAll(command);
    List<String> envp = new ArrayList<>(env.size() + 1);
    env.forEach((k, v) -> {
      if (!k.equals(INHERITED_FD_ENV)) {
        envp.add(k + "=" + v);
      }
    });
    List<SpawnFileAction> actions =
        new ArrayList<>(
            List.of(
                SpawnFileAction.open("/dev/null", 0, OpenFlags.O_RDONLY.intValue(), 0),
                SpawnFileAction.open(
                    output.toString(),
                    1,
                    OpenFlags.O_WRONLY.intValue()
                        | OpenFlags.O_CREAT.intValue()
                        | OpenFlags.O_APPEND.intValue(),
                    0644),
                SpawnFileAction.dup(1, 2)));
    if (inherit.isPresent()) {
      if (inherit.getAsInt() == INHERITED_FD) {
        throw new IllegalArgumentException(
            "descriptor " + INHERITED_FD + " cannot be passed on as itself; pass a copy");
      }
      actions.add(SpawnFileAction.dup(inherit.getAsInt(), INHERITED_FD));
      envp.add(INHERITED_FD_ENV + "=" + INHERITED_FD);
    }
    long pid;
    synchronized (this) {
      pid = posix.posix_spawnp(bash, actions, argv, envp);
      if (pid <= 0) {
        throw new IOException(
            "cannot start " + command.getFirst() + ": posix_spawn failed (errno " + errno() + ")");
      }
      CompletableFuture<Integer> exit = new CompletableFuture<>();
      waiting.put(pid, exit);
      if (waiter == null) {
        waiter = Thread.ofPlatform().daemon().name("child-waiter").start(this::waitLoop);
      } else {
        notifyAll();
      }
      return new Child(pid, exit, this);
    }
  }

  private String errno() {
    int e = posix.errno();
    Errno named = Errno.valueOf(e);
    return e + (named == null ? "" : " " + named.name() + ": " + named.description());
  }

  /** How many children are live (not yet reaped). */
  public int live() {
    return waiting.size();
  }

  /**
   * The waiter's loop. Nothing ends it: a dead waiter would leave every child of this plugin
   * unreaped and its exit unseen (no restart of a crashed proxy, ever). An interrupt can only come
   * from code run on this thread (an {@link Child#onExit} callback) or a stray caller, and a
   * failure from one child's wait; both are logged and the loop goes on.
   */
  private void waitLoop() {
    int[] status = new int[1];
    while (true) {
      try {
        synchronized (this) {
          while (waiting.isEmpty()) {
            wait();
          }
        }
        reapExited(status);
      } catch (InterruptedException e) {
        strayInterrupt();
      } catch (RuntimeException e) {
        LOG.error("the child waiter failed; it goes on ({} children live)", waiting.size(), e);
      }
      try {
        Thread.sleep(poll);
      } catch (InterruptedException e) {
        strayInterrupt();
      }
    }
  }

  private void strayInterrupt() {
    LOG.warn("the child waiter was interrupted; it goes on ({} children live)", waiting.size());
  }

  private void reapExited(int[] status) {
    for (Map.Entry<Long, CompletableFuture<Integer>> e : waiting.entrySet()) {
      long pid = e.getKey();
      long r = posix.waitpid(pid, status, WaitFlags.WNOHANG.intValue());
      if (r == pid) {
        waiting.remove(pid);
        e.getValue().complete(exitCode(status[0]));
      } else if (r < 0) {
        // ECHILD: someone else reaped it (it cannot happen while only this thread waits for
        // these pids); its status is lost
        waiting.remove(pid);
        LOG.warn("child {} could not be waited for (errno {})", pid, errno());
        e.getValue().complete(-1);
      }
    }
  }

  /** A wait status as the JDK reports it: the exit code, or 128 + the signal that ended it. */
  static int exitCode(int status) {
    int signal = status & 0x7f;
    if (signal == 0) {
      return (status >> 8) & 0xff;
    }
    return 128 + signal;
  }

  /**
   * One spawned child, as a {@link Process} (no streams: its output goes to its file). Its exit
   * completes on the waiter thread; {@link #onExit} callbacks run there and must be short.
   */
  public static final class Child extends Process {

    private final long pid;
    private final CompletableFuture<Integer> exit;
    private final Children owner;

    Child(long pid, CompletableFuture<Integer> exit, Children owner) {
      this.pid = pid;
      this.exit = exit;
      this.owner = owner;
    }

    @Override
    public long pid() {
      return pid;
    }

    @Override
    public OutputStream getOutputStream() {
      return OutputStream.nullOutputStream();
    }

    @Override
    public InputStream getInputStream() {
      return InputStream.nullInputStream();
    }

    @Override
    public InputStream getErrorStream() {
      return InputStream.nullInputStream();
    }

    @Override
    public int waitFor() throws InterruptedException {
      try {
        return exit.get();
      } catch (ExecutionException e) {
        throw new IllegalStateException(e.getCause());
      }
    }

    @Override
    public boolean waitFor(long timeout, TimeUnit unit) throws InterruptedException {
      try {
        exit.get(timeout, unit);
        return true;
      } catch (TimeoutException e) {
        return false;
      } catch (ExecutionException e) {
        throw new IllegalStateException(e.getCause());
      }
    }

    @Override
    public int exitValue() {
      Integer code = exit.getNow(null);
      if (code == null) {
        throw new IllegalThreadStateException("process " + pid + " has not exited");
      }
      return code;
    }

    @Override
    public boolean isAlive() {
      return !exit.isDone();
    }

    @Override
    public CompletableFuture<Process> onExit() {
      return exit.thenApply(code -> this);
    }

    @Override
    public void destroy() {
      signal(Signal.SIGTERM);
    }

    @Override
    public Process destroyForcibly() {
      signal(Signal.SIGKILL);
      return this;
    }

    private void signal(Signal s) {
      // a reaped pid may belong to another process by now
      if (!exit.isDone()) {
        owner.posix.kill(pid, s.intValue());
      }
    }

    @Override
    public String toString() {
      return "child " + pid;
    }
  }
}
