package io.efscsi.demo;

import io.efscsi.common.config.UsageException;
import io.efscsi.emulator.mounttarget.Ganesha;
import io.efscsi.proxy.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code efs-csi lab DIR}: the loopback NFS server the integration tests ({@code NfsLab}), the
 * demo's mount target and the benchmarks ({@code benchmarks/nfslab.py}) share, {@link Ganesha}, for
 * a caller that is not Java. Starts it in {@code DIR}, prints one JSON line ({@code nfsPort},
 * {@code export}, {@code pseudo}, {@code pid}) once it serves, and stops it when stdin closes (the
 * caller went away or closed the pipe) or on SIGTERM.
 */
final class LabCommand {

  private LabCommand() {}

  static int run(List<String> args, InputStream in, PrintStream out, PrintStream err)
      throws UsageException {
    if (args.size() != 1 || args.getFirst().startsWith("-")) {
      throw new UsageException("lab takes one argument, the directory to serve from, got " + args);
    }
    DemoLogging.quiet();
    Path dir = Path.of(args.getFirst()).toAbsolutePath();
    try (Ganesha nfs = Ganesha.start(Files.createDirectories(dir))) {
      Thread stop = new Thread(() -> close(nfs), "lab-stop");
      Runtime.getRuntime().addShutdownHook(stop);
      Map<String, Object> facts = new LinkedHashMap<>();
      facts.put("nfsPort", nfs.port());
      facts.put("export", nfs.export().toString());
      facts.put("pseudo", Ganesha.PSEUDO);
      facts.put("pid", nfs.pid());
      out.println(Json.line(facts));
      out.flush();
      while (in.read() >= 0) {
        // serve until the caller closes stdin
      }
      Runtime.getRuntime().removeShutdownHook(stop);
      return 0;
    } catch (IOException | InterruptedException e) {
      err.println("efs-csi lab: " + e.getMessage());
      return 1;
    }
  }

  private static void close(Ganesha nfs) {
    try {
      nfs.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
