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
 * one after the other, in {@link #SHARED}'s order (the one that removes the driver last), after
 * every other class but the kernel VM's ({@code Kernel*IT}, which keep their place at the end of
 * the given order when failsafe gives them there), and {@link ClusterDriver} is told which of them
 * to wait for before it closes the cluster ({@link ClusterShared#expect}).
 *
 * <p>Why after the others: the driver's image build, which the shared cluster needs first, begins
 * as the IT run starts ({@link ImagesAhead}) and takes 60-150 s; where the shared classes ran
 * early, the first of them waited for most of it (110 s in the run of 50b64f6), where now the
 * classes before them run meanwhile.
 */
public final class ClusterClassOrder implements ClassOrderer {

  /** The classes on the shared cluster, in the order they run. */
  static final List<Class<?>> SHARED =
      List.of(
          ClusterDriverIT.class,
          ClusterRunbookIT.class,
          ClusterFaultsIT.class,
          ClusterRemovalIT.class);

  @Override
  public void orderClasses(ClassOrdererContext context) {
    List<? extends ClassDescriptor> classes = context.getClassDescriptors();
    Map<Class<?>, Integer> given = new HashMap<>();
    List<String> present = new ArrayList<>();
    // where the shared classes go: before the first kernel VM class, else at the end
    int at = classes.size();
    for (int i = 0; i < classes.size(); i++) {
      Class<?> c = classes.get(i).getTestClass();
      given.put(c, i);
      if (c.getSimpleName().startsWith("Kernel") && !SHARED.contains(c)) {
        at = Math.min(at, i);
      }
    }
    for (Class<?> c : SHARED) {
      if (given.containsKey(c)) {
        present.add(c.getSimpleName());
      }
    }
    int slot = at;
    // a kernel class given before another class keeps its place; the shared classes go just
    // before it, so that the VM's boot starts no later than it did
    classes.sort(
        Comparator.comparingDouble((ClassDescriptor d) ->
                SHARED.contains(d.getTestClass()) ? slot - 0.5 : given.get(d.getTestClass()))
            .thenComparingInt(d -> SHARED.indexOf(d.getTestClass())));
    if (!present.isEmpty()) {
      ClusterShared.expect(present);
    }
  }
}
