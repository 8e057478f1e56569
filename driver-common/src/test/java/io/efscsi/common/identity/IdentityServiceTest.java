package io.efscsi.common.identity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.efscsi.common.BuildInfo;
import io.efscsi.common.grpc.CsiServer;
import io.efscsi.csi.v1.GetPluginCapabilitiesRequest;
import io.efscsi.csi.v1.GetPluginInfoRequest;
import io.efscsi.csi.v1.IdentityGrpc;
import io.efscsi.csi.v1.PluginCapability;
import io.efscsi.csi.v1.ProbeRequest;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class IdentityServiceTest {

  private Server server;
  private ManagedChannel channel;

  private IdentityGrpc.IdentityBlockingStub start(
      Set<IdentityService.Capability> caps, Readiness readiness) throws Exception {
    String name = InProcessServerBuilder.generateName();
    server =
        InProcessServerBuilder.forName(name)
            .directExecutor()
            .addService(
                CsiServer.intercepted(
                    new IdentityService(new BuildInfo("1.2.3", "c0ffee", "d"), caps, readiness)))
            .build()
            .start();
    channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    return IdentityGrpc.newBlockingStub(channel);
  }

  @AfterEach
  void stop() {
    channel.shutdownNow();
    server.shutdownNow();
  }

  @Test
  void pluginInfoIsTheDropInName() throws Exception {
    var info =
        start(Set.of(), new Readiness()).getPluginInfo(GetPluginInfoRequest.getDefaultInstance());
    assertEquals("efs.csi.aws.com", info.getName());
    assertEquals("1.2.3", info.getVendorVersion());
  }

  @Test
  void capabilitiesAreThoseOfTheMode() throws Exception {
    var stub =
        start(
            Set.of(
                IdentityService.Capability.VOLUME_ACCESSIBILITY_CONSTRAINTS,
                IdentityService.Capability.CONTROLLER_SERVICE),
            new Readiness());
    List<PluginCapability.Service.Type> types =
        stub
            .getPluginCapabilities(GetPluginCapabilitiesRequest.getDefaultInstance())
            .getCapabilitiesList()
            .stream()
            .map(c -> c.getService().getType())
            .toList();
    assertEquals(
        List.of(
            PluginCapability.Service.Type.CONTROLLER_SERVICE,
            PluginCapability.Service.Type.VOLUME_ACCESSIBILITY_CONSTRAINTS),
        types);
  }

  @Test
  void onlineExpansionIsAVolumeExpansionCapability() throws Exception {
    var stub =
        start(
            Set.of(
                IdentityService.Capability.CONTROLLER_SERVICE,
                IdentityService.Capability.ONLINE_VOLUME_EXPANSION),
            new Readiness());
    var caps =
        stub.getPluginCapabilities(GetPluginCapabilitiesRequest.getDefaultInstance())
            .getCapabilitiesList();
    assertEquals(2, caps.size());
    assertEquals(
        PluginCapability.VolumeExpansion.Type.ONLINE, caps.get(1).getVolumeExpansion().getType());
    assertEquals(
        PluginCapability.Service.Type.CONTROLLER_SERVICE, caps.get(0).getService().getType());
  }

  @Test
  void probeFollowsReadiness() throws Exception {
    Readiness readiness = new Readiness();
    Readiness.Gate gate = readiness.gate("supervisor", "not started");
    var stub = start(Set.of(), readiness);
    var first = stub.probe(ProbeRequest.getDefaultInstance());
    assertTrue(first.hasReady(), "ready is always set, never left for the client to guess");
    assertFalse(first.getReady().getValue());
    gate.open();
    assertTrue(stub.probe(ProbeRequest.getDefaultInstance()).getReady().getValue());
  }
}
