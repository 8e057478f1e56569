package io.efscsi.launcher;

import java.util.function.Consumer;
import sun.misc.Signal;

/**
 * SIGTERM and SIGINT start a graceful shutdown instead of the JVM's abrupt exit, so in-flight CSI
 * calls can finish and the process exits 0.
 */
final class Signals {

  private Signals() {}

  static void onTermination(Consumer<String> handler) {
    for (String name : new String[] {"TERM", "INT"}) {
      Signal.handle(new Signal(name), s -> handler.accept(s.getName()));
    }
  }
}
