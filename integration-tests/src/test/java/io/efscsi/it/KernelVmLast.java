package io.efscsi.it;

import java.util.Comparator;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.ClassOrdererContext;

/**
 * The failsafe run's class order (integration-tests/pom.xml): the kernel VM suite's classes after
 * every other class, which otherwise keep the order they were found in. The VM boots as the plan
 * starts ({@link KernelVmBootListener}); its classes only judge the facts it wrote, so run first
 * they would hold every other IT back until the boot ends.
 */
public final class KernelVmLast implements ClassOrderer {

  @Override
  public void orderClasses(ClassOrdererContext context) {
    context
        .getClassDescriptors()
        .sort(Comparator.comparing(d -> KernelVmFixture.class.isAssignableFrom(d.getTestClass())));
  }
}
