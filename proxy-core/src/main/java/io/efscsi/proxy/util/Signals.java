package io.efscsi.proxy.util;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.function.Consumer;

/**
 * Signal handlers for the launcher and the proxy: SIGTERM and SIGINT start a graceful shutdown
 * instead of the JVM's abrupt exit, SIGHUP reloads the proxy's TLS material. Uses {@code
 * sun.misc.Signal} from the jdk.unsupported module, looked up at run time (javac refuses to compile
 * a direct reference warning-free); when it is missing the JVM's shutdown hook does the same work
 * with exit status 143.
 */
public final class Signals {

  private Signals() {}

  /** Installs {@code handler} for TERM and INT; false when the JVM offers no signal API. */
  public static boolean onTermination(Consumer<String> handler) {
    return on(handler, "TERM", "INT");
  }

  /** Installs {@code handler} for the named signals (without the SIG prefix). */
  public static boolean on(Consumer<String> handler, String... names) {
    try {
      Class<?> signalClass = Class.forName("sun.misc.Signal");
      Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
      Method handle = signalClass.getMethod("handle", signalClass, handlerClass);
      Method getName = signalClass.getMethod("getName");
      for (String name : names) {
        Object signal = signalClass.getConstructor(String.class).newInstance(name);
        Object proxy =
            Proxy.newProxyInstance(
                Signals.class.getClassLoader(),
                new Class<?>[] {handlerClass},
                (p, m, a) -> {
                  if (m.getName().equals("handle")) {
                    handler.accept((String) getName.invoke(a[0]));
                    return null;
                  }
                  return switch (m.getName()) {
                    case "hashCode" -> System.identityHashCode(p);
                    case "equals" -> p == a[0];
                    default -> "efs-csi signal handler";
                  };
                });
        handle.invoke(null, signal, proxy);
      }
      return true;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return false;
    }
  }
}
