package io.efscsi.it;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Begins the image builds ({@link BuiltImages}) as the IT run starts, when the run holds a class
 * that uses them: the Dockerfile's build (its apt-get and AOT training) and the sidecars' then run
 * beside the classes that come first (a minute of the run's time otherwise spent in the first
 * user's wait). A run without such a class (the quick lane, one class on its own, the unit tier)
 * builds nothing. Registered with JUnit's launcher (META-INF/services).
 */
public final class ImagesAhead implements TestExecutionListener {

  @Override
  public void testPlanExecutionStarted(TestPlan plan) {
    boolean project = false;
    boolean clusters = false;
    Deque<TestIdentifier> todo = new ArrayDeque<>(plan.getRoots());
    while (!todo.isEmpty()) {
      TestIdentifier id = todo.pop();
      todo.addAll(plan.getChildren(id));
      Optional<Class<?>> c =
          id.getSource()
              .filter(ClassSource.class::isInstance)
              .map(s -> ((ClassSource) s).getJavaClass());
      if (c.isPresent() && usesImages(c.get())) {
        project = true;
        clusters |=
            ClusterDriverFixture.class.isAssignableFrom(c.get())
                || ClusterClassOrder.SHARED.contains(c.get());
      }
    }
    if (project) {
      BuiltImages.beginAhead(clusters);
    }
  }

  private static boolean usesImages(Class<?> c) {
    for (Class<?> k = c; k != null; k = k.getSuperclass()) {
      for (ExtendWith e : k.getDeclaredAnnotationsByType(ExtendWith.class)) {
        for (Class<?> x : e.value()) {
          if (x == BuiltImages.class) {
            return true;
          }
        }
      }
    }
    return false;
  }
}
