package io.efscsi.it;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.ClassDescriptor;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.ClassOrdererContext;

/**
 * The IT run's class order (failsafe's {@code junit.jupiter.testclass.order.default}): the order
 * failsafe gives, except that the classes on the shared driver cluster ({@link ClusterDriver}) run
 * one after the other, where the first of them would have run, in {@link #SHARED}'s order (the one
 * that removes the driver last), and {@link ClusterDriver} is told which of them to wait for before
 * it closes the cluster.
 */
public final class ClusterClassOrder implements ClassOrderer {

  /** The classes on the shared cluster, in the order they run. */
  static final List<Class<?>> SHARED =
      List.of(ClusterDriverIT.class, ClusterRunbookIT.class, ClusterRemovalIT.class);

  @Override
  public void orderClasses(ClassOrdererContext context) {
    List<? extends ClassDescriptor> classes = context.getClassDescriptors();
    Map<Class<?>, Integer> given = new HashMap<>();
    int first = Integer.MAX_VALUE;
    List<String> present = new ArrayList<>();
    for (int i = 0; i < classes.size(); i++) {
      Class<?> c = classes.get(i).getTestClass();
      given.put(c, i);
      if (SHARED.contains(c)) {
        first = Math.min(first, i);
      }
    }
    for (Class<?> c : SHARED) {
      if (given.containsKey(c)) {
        present.add(c.getSimpleName());
      }
    }
    int at = first;
    classes.sort(
        Comparator.comparingInt((ClassDescriptor d) ->
                SHARED.contains(d.getTestClass()) ? at : given.get(d.getTestClass()))
            .thenComparingInt(d -> SHARED.indexOf(d.getTestClass())));
    if (!present.isEmpty()) {
      ClusterDriver.expect(present);
    }
  }
}
