package io.efscsi.it;

import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Boots the kernel VM as the test plan starts when the plan holds a {@link KernelVmFixture} class
 * (registered in META-INF/services): the VM's scenarios, some 25 minutes of emulation that mostly
 * need the CPU QEMU runs at a higher priority ({@link KernelVm#NICE}), then run beside every other
 * IT instead of after them, and the suite's classes ({@link KernelVmLast} puts them last) judge the
 * facts the boot wrote. {@code -Defscsi.vm.early=false} boots when the first of them starts, as
 * before.
 */
public final class KernelVmBootListener implements TestExecutionListener {

  @Override
  public void testPlanExecutionStarted(TestPlan plan) {
    if (!Boolean.parseBoolean(System.getProperty("efscsi.vm.early", "true"))
        || KernelVmFixture.reusesOut()
        || plan.getRoots().stream()
            .flatMap(root -> plan.getDescendants(root).stream())
            .noneMatch(KernelVmBootListener::isKernelVmClass)) {
      return;
    }
    KernelVmFixture.startBoot();
  }

  private static boolean isKernelVmClass(TestIdentifier id) {
    return id.getSource()
        .filter(ClassSource.class::isInstance)
        .map(s -> KernelVmFixture.class.isAssignableFrom(((ClassSource) s).getJavaClass()))
        .orElse(false);
  }
}
