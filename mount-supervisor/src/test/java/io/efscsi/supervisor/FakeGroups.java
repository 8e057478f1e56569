package io.efscsi.supervisor;

import io.efscsi.supervisor.cgroup.CgroupPlacer;
import io.efscsi.supervisor.cgroup.Limits;
import io.efscsi.supervisor.cgroup.Placement;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;

/** In-memory cgroups for supervisor tests: what a group holds and what removing it does. */
final class FakeGroups {

  private FakeGroups() {}

  /** A group {@code described} holding {@code pids}, running {@code onRemove} when removed. */
  static Placement group(String described, Supplier<List<Long>> pids, Runnable onRemove) {
    return new Placement() {
      @Override
      public String describe() {
        return described;
      }

      @Override
      public long oomKills() {
        return 0;
      }

      @Override
      public List<Long> pids() {
        return pids.get();
      }

      @Override
      public void remove() {
        onRemove.run();
      }
    };
  }

  /**
   * A placer of kind {@code test} whose groups come from {@code groups} (given the {@code
   * test:<name>} form); {@code onPlace} hears every name placed.
   */
  static CgroupPlacer placer(
      Function<String, Placement> groups, java.util.function.Consumer<String> onPlace) {
    return new CgroupPlacer() {
      @Override
      public String kind() {
        return "test";
      }

      @Override
      public Placement place(String name, Limits limits) {
        onPlace.accept(name);
        return groups.apply("test:" + name);
      }

      @Override
      public Placement existing(String described) {
        return groups.apply(described);
      }
    };
  }
}
