package io.efscsi.it;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Boots the kernel VM ({@link KernelVmFixture}) as the first class on the shared cluster starts
 * ({@link ClusterClassOrder#SHARED}), when the run holds both: the VM's scenarios (170–195% of the
 * machine's CPU) then run beside the cluster classes, which mostly wait on the cluster (leases,
 * restarts, a 60 s outage: 30–50% of it), instead of after them. The kernel classes, which come
 * right after the cluster classes, wait for what is left of the boot. A run without both (the quick
 * lane, one class on its own) boots where it did: in the first kernel class. Registered with
 * JUnit's launcher (META-INF/services).
 */
public final class VmAhead implements TestExecutionListener {

  private volatile boolean both;

  @Override
  public void testPlanExecutionStarted(TestPlan plan) {
    boolean kernel = false;
    boolean cluster = false;
    Deque<TestIdentifier> todo = new ArrayDeque<>(plan.getRoots());
    while (!todo.isEmpty()) {
      TestIdentifier id = todo.pop();
      todo.addAll(plan.getChildren(id));
      Optional<Class<?>> c = testClass(id);
      if (c.isPresent()) {
        kernel |= KernelVmFixture.class.isAssignableFrom(c.get());
        cluster |= ClusterClassOrder.SHARED.contains(c.get());
      }
    }
    both = kernel && cluster;
  }

  @Override
  public void executionStarted(TestIdentifier id) {
    if (both && testClass(id).filter(ClusterClassOrder.SHARED::contains).isPresent()) {
      KernelVmFixture.bootAhead();
    }
  }

  private static Optional<Class<?>> testClass(TestIdentifier id) {
    return id.getSource()
        .filter(ClassSource.class::isInstance)
        .map(s -> ((ClassSource) s).getJavaClass());
  }
}
