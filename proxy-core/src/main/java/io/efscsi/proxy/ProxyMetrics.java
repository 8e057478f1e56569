package io.efscsi.proxy;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/** Counters of one proxy process, reported on the control socket. */
public final class ProxyMetrics {

  final LongAdder bytesToServer = new LongAdder();
  final LongAdder bytesToClient = new LongAdder();
  final LongAdder recordsToServer = new LongAdder();
  final LongAdder recordsToClient = new LongAdder();
  final LongAdder clientConnections = new LongAdder();
  final AtomicLong activeClients = new AtomicLong();
  final LongAdder upstreamConnections = new LongAdder();
  final AtomicLong activeUpstreams = new AtomicLong();
  final LongAdder upstreamFailures = new LongAdder();
  final LongAdder upstreamConnectsIpv6 = new LongAdder();
  final LongAdder upstreamConnectsIpv4 = new LongAdder();
  final LongAdder upstreamConnectFallbacks = new LongAdder();
  final LongAdder tlsHandshakeFailures = new LongAdder();
  final LongAdder bindUnsupported = new LongAdder();
  final LongAdder scaleUps = new LongAdder();
  final LongAdder scaleUpAttempts = new LongAdder();
  final LongAdder pausedNanos = new LongAdder();
  final LongAdder tlsReloads = new LongAdder();
  volatile String lastError = "";
  volatile String partition = "";

  /** A flat name → value view, in a stable order. */
  public Map<String, Object> snapshot() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("bytes_to_server", bytesToServer.sum());
    m.put("bytes_to_client", bytesToClient.sum());
    m.put("records_to_server", recordsToServer.sum());
    m.put("records_to_client", recordsToClient.sum());
    m.put("client_connections_total", clientConnections.sum());
    m.put("client_connections", activeClients.get());
    m.put("upstream_connections_total", upstreamConnections.sum());
    m.put("upstream_connections", activeUpstreams.get());
    m.put("upstream_failures_total", upstreamFailures.sum());
    m.put("upstream_connects_ipv6_total", upstreamConnectsIpv6.sum());
    m.put("upstream_connects_ipv4_total", upstreamConnectsIpv4.sum());
    m.put("upstream_connect_fallbacks_total", upstreamConnectFallbacks.sum());
    m.put("tls_handshake_failures_total", tlsHandshakeFailures.sum());
    m.put("bind_unsupported_total", bindUnsupported.sum());
    m.put("scale_ups_total", scaleUps.sum());
    m.put("scale_up_attempts_total", scaleUpAttempts.sum());
    m.put("backpressure_paused_seconds", pausedNanos.sum() / 1e9);
    m.put("tls_reloads_total", tlsReloads.sum());
    m.put("partition", partition);
    m.put("last_error", lastError);
    return m;
  }
}
