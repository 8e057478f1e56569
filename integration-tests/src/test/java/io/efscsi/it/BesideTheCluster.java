package io.efscsi.it;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * The IT classes that run beside the classes on the shared cluster ({@link
 * ClusterClassOrder#SHARED}). Those mostly wait on the cluster's controllers, leases, grace periods
 * and timers (39-56% of both cores in the time table), so classes that need the CPU and no cluster
 * run at the same time, one at a time (JUnit's parallel execution: every other class runs in order
 * on one thread). Measured in full runs: the cluster classes took 567-571 s against 455 s alone
 * (the kubelet's retry backoff stretches a mount that meets a busy node), while NodeCrashIT and
 * NodeStormIT, 288 s alone, ran beside them: some 170 s less in all.
 *
 * <p>Such a class is in {@link #BESIDE} and is annotated {@code @Execution(CONCURRENT)} and
 * {@code @ExtendWith(BesideTheCluster.class)}. JUnit starts it with the run; it waits (before all
 * its tests) until the first cluster class's first test starts (after the cluster's start, image
 * import and chart install), so that it never runs beside the classes before them, which use both
 * cores, and until no other of them runs; the wait is a row of the time table, which the class's
 * own row leaves out. The kernel VM waits for it to end ({@link #awaitBesideDone}), as the VM uses
 * both cores. Where the run holds no cluster class (one class on its own, the quick lane), it does
 * not wait.
 *
 * <p>Also a {@link TestExecutionListener} (META-INF/services): it learns from the test plan which
 * of these classes are in the run, and sees the cluster classes start and these end.
 */
public final class BesideTheCluster
    implements TestExecutionListener, BeforeAllCallback, AfterAllCallback {

  /** The classes that run beside the cluster classes. */
  static final List<Class<?>> BESIDE = List.of(NodeCrashIT.class, NodeStormIT.class);

  private static final CountDownLatch clusterBegun = new CountDownLatch(1);

  private static volatile CountDownLatch besideDone = new CountDownLatch(0);

  /**
   * One of these classes at a time: JUnit may start them all at once (they wait, each on a thread
   * of its own), and beside the cluster two of them would take both cores.
   */
  private static final Semaphore oneAtATime = new Semaphore(1, true);

  /** Where a class records that it holds its turn. */
  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(BesideTheCluster.class);

  private static final String HOLDS = "holds its turn";

  @Override
  public void testPlanExecutionStarted(TestPlan plan) {
    int beside = 0;
    boolean cluster = false;
    Deque<TestIdentifier> todo = new ArrayDeque<>(plan.getRoots());
    while (!todo.isEmpty()) {
      TestIdentifier id = todo.pop();
      todo.addAll(plan.getChildren(id));
      Optional<Class<?>> c = classOf(id);
      if (c.isPresent()) {
        beside += BESIDE.contains(c.get()) ? 1 : 0;
        cluster |= ClusterClassOrder.SHARED.contains(c.get());
      }
    }
    besideDone = new CountDownLatch(beside);
    if (!cluster) {
      clusterBegun.countDown();
    }
  }

  /**
   * The first test of a cluster class: the cluster has started, its images are imported and the
   * chart installed (all of which need the cores), and the tests mostly wait.
   */
  @Override
  public void executionStarted(TestIdentifier id) {
    if (id.isTest() && testClass(id).filter(ClusterClassOrder.SHARED::contains).isPresent()) {
      clusterBegun.countDown();
    }
  }

  @Override
  public void executionSkipped(TestIdentifier id, String reason) {
    if (testClass(id).filter(ClusterClassOrder.SHARED::contains).isPresent()) {
      clusterBegun.countDown();
    }
    executionFinished(id, TestExecutionResult.aborted(null));
  }

  @Override
  public void executionFinished(TestIdentifier id, TestExecutionResult result) {
    if (testClass(id).filter(ClusterClassOrder.SHARED::contains).isPresent()) {
      clusterBegun.countDown(); // a cluster class that failed before its first test
    }
    if (classOf(id).filter(BESIDE::contains).isPresent()) {
      besideDone.countDown();
    }
  }

  @Override
  public void testPlanExecutionFinished(TestPlan plan) {
    clusterBegun.countDown();
  }

  /**
   * Before a class beside the cluster: waits until the first cluster class has started, and until
   * no other of these runs.
   */
  @Override
  public void beforeAll(ExtensionContext context) throws InterruptedException {
    long t0 = System.nanoTime();
    clusterBegun.await();
    oneAtATime.acquire();
    context.getStore(NAMESPACE).put(HOLDS, true);
    TestTimes.since(
        "waiting for the cluster classes",
        context.getRequiredTestClass().getSimpleName(),
        t0,
        "then beside them");
  }

  @Override
  public void afterAll(ExtensionContext context) {
    if (context.getStore(NAMESPACE).remove(HOLDS) != null) {
      oneAtATime.release();
    }
  }

  /** Until every class beside the cluster has ended (the kernel VM needs both cores alone). */
  static void awaitBesideDone(String partOf) throws InterruptedException {
    long t0 = System.nanoTime();
    besideDone.await();
    if (System.nanoTime() - t0 > 1_000_000_000L) {
      TestTimes.since("waiting for the classes beside the cluster", partOf, t0, "");
    }
  }

  /** The class of a class's identifier. */
  private static Optional<Class<?>> classOf(TestIdentifier id) {
    return id.getSource()
        .filter(ClassSource.class::isInstance)
        .map(s -> ((ClassSource) s).getJavaClass());
  }

  /** The class of a class's or a test method's identifier. */
  private static Optional<Class<?>> testClass(TestIdentifier id) {
    return id.getSource()
        .flatMap(s ->
            s instanceof ClassSource c
                ? Optional.<Class<?>>of(c.getJavaClass())
                : s instanceof MethodSource m
                    ? Optional.<Class<?>>of(m.getJavaClass())
                    : Optional.empty());
  }
}
