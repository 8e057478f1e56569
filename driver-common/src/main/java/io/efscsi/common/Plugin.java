package io.efscsi.common;

import io.efscsi.common.identity.IdentityService;
import io.efscsi.common.identity.Readiness;
import io.grpc.BindableService;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Set;

/**
 * One side of the driver (controller or node) as the launcher sees it: the CSI services it adds
 * beside Identity, the plugin capabilities it advertises, and the readiness checks it registers.
 */
public interface Plugin extends AutoCloseable {

  String name();

  /** Services served beside Identity. */
  List<BindableService> services();

  /** Plugin capabilities this side contributes to GetPluginCapabilities. */
  Set<IdentityService.Capability> capabilities();

  /** Gives the plugin the process's metrics registry; called once, before {@link #start}. */
  default void bindMetrics(MeterRegistry registry) {}

  /**
   * Registers readiness checks and starts background work (clients, supervisors). Must return
   * quickly: slow start-up work runs in the background and reports through {@code readiness}.
   */
  void start(Readiness readiness);

  /** Stops background work. Must not touch volumes: proxies and mounts outlive the plugin. */
  @Override
  void close();
}
