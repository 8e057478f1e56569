package io.efscsi.node.volume;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@link HostResolver} on the JDK's resolver ({@code InetAddress.getAllByName}), each lookup on a
 * virtual thread and abandoned after a timeout, so a dead DNS server costs a bounded wait. Like
 * efs-utils it tries the name once more with a trailing dot, which skips the resolver's search
 * domains.
 */
public final class InetAddressHostResolver implements HostResolver {

  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

  /** The lookup itself; the JDK's in production. */
  interface Lookup {
    InetAddress[] lookup(String host) throws UnknownHostException;
  }

  private final Duration timeout;
  private final Lookup lookup;

  public InetAddressHostResolver(Duration timeout) {
    this(timeout, InetAddress::getAllByName);
  }

  InetAddressHostResolver(Duration timeout, Lookup lookup) {
    this.timeout = timeout;
    this.lookup = lookup;
  }

  @Override
  public List<InetAddress> resolve(String host) {
    List<InetAddress> found = once(host);
    return found.isEmpty() && !host.endsWith(".") ? once(host + ".") : found;
  }

  private List<InetAddress> once(String host) {
    CompletableFuture<List<InetAddress>> result = new CompletableFuture<>();
    Thread.ofVirtual()
        .name("dns-" + host)
        .start(() -> {
          try {
            result.complete(List.of(lookup.lookup(host)));
          } catch (UnknownHostException | RuntimeException e) {
            result.complete(List.of());
          }
        });
    try {
      return result.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException | ExecutionException e) {
      return List.of();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return List.of();
    }
  }
}
