package io.efscsi.demo;

import io.efscsi.common.config.UsageException;
import io.efscsi.emulator.lab.LoopbackNfs;
import io.efscsi.emulator.mounttarget.Ganesha;
import io.efscsi.proxy.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code efs-csi lab DIR [--tls]}: the project's one loopback NFS lab ({@link LoopbackNfs}, which
 * the integration tests' {@code NfsLab} start in-process) for a caller that is not Java, {@code
 * benchmarks/nfslab.py}. Starts it in {@code DIR}, prints one JSON line once it serves ({@code
 * nfsPort}, {@code tlsPort} with {@code --tls}, {@code export}, {@code pseudo}, {@code serverName},
 * {@code cert}, {@code key}, {@code nfsPid}), and stops it when stdin closes (the caller went away
 * or closed the pipe) or on SIGTERM.
 */
final class LabCommand {

  static final String USAGE = "lab takes a directory to serve from and optionally --tls";

  private LabCommand() {}

  static int run(List<String> args, InputStream in, PrintStream out, PrintStream err)
      throws UsageException {
    List<String> dirs = args.stream().filter(a -> !a.equals("--tls")).toList();
    if (dirs.size() != 1 || dirs.getFirst().startsWith("-")) {
      throw new UsageException(USAGE + ", got " + args);
    }
    DemoLogging.quiet();
    Path dir = Path.of(dirs.getFirst()).toAbsolutePath();
    try (LoopbackNfs lab = LoopbackNfs.start(dir, args.contains("--tls"))) {
      Thread stop = new Thread(() -> close(lab), "lab-stop");
      Runtime.getRuntime().addShutdownHook(stop);
      Map<String, Object> facts = new LinkedHashMap<>();
      facts.put("nfsPort", lab.nfsPort());
      if (lab.tlsPort() > 0) {
        facts.put("tlsPort", lab.tlsPort());
      }
      facts.put("export", lab.export().toString());
      facts.put("pseudo", Ganesha.PSEUDO);
      facts.put("serverName", LoopbackNfs.SERVER_NAME);
      facts.put("cert", lab.cert().toString());
      facts.put("key", lab.key().toString());
      facts.put("nfsPid", lab.nfsPid());
      out.println(Json.line(facts));
      out.flush();
      while (in.read() >= 0) {
        // serve until the caller closes stdin
      }
      Runtime.getRuntime().removeShutdownHook(stop);
      return 0;
    } catch (IOException | InterruptedException | RuntimeException e) {
      err.println("efs-csi lab: " + e.getMessage());
      return 1;
    }
  }

  private static void close(LoopbackNfs lab) {
    try {
      lab.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
