package io.efscsi.node;

import io.efscsi.common.Plugin;
import io.efscsi.common.identity.IdentityService.Capability;
import io.efscsi.common.identity.Readiness;
import io.grpc.BindableService;
import java.util.List;
import java.util.Set;

/**
 * The node side. Ready when its state directory is writable. (The mount supervisor and the Node
 * service join here with their issues; until then the node plugin serves Identity only.)
 */
public final class NodePlugin implements Plugin {

  private final NodeOptions options;

  public NodePlugin(NodeOptions options) {
    this.options = options;
  }

  @Override
  public String name() {
    return "node";
  }

  @Override
  public List<BindableService> services() {
    return List.of();
  }

  @Override
  public Set<Capability> capabilities() {
    return Set.of(Capability.VOLUME_ACCESSIBILITY_CONSTRAINTS);
  }

  @Override
  public void start(Readiness readiness) {
    readiness.add(new StateDirCheck(options.stateDir()));
  }

  @Override
  public void close() {}
}
