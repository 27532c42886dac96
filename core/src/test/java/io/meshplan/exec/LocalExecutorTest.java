package io.meshplan.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.testing.Cases;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class LocalExecutorTest {
  /** Tasks of -1000..1000, at most 40 of them, run on 1..6 threads. */
  private record Run(List<Integer> tasks, int threads) {
  }

  /** Results come back in task order whatever the thread count: compared with a plain loop. */
  @Test
  void resultsInTaskOrder() {
    List<Integer> longest = IntStream.range(0, 40).map(i -> -1000 + 50 * i).boxed().toList();
    List<Run> edges = List.of(new Run(List.of(), 1), new Run(List.of(), 6),
        new Run(List.of(0), 1), new Run(List.of(1), 6), new Run(List.of(-1), 1),
        new Run(List.of(-1000, 1000), 6), new Run(longest, 1), new Run(longest, 6));
    Cases.check(1, 50, edges,
        gen -> new Run(gen.list(0, 40, g -> g.between(-1000, 1000)), gen.between(1, 6)), run -> {
          List<Integer> expected = new ArrayList<>();
          for (int t : run.tasks()) {
            expected.add(t * t - 3);
          }
          try (LocalExecutor ex = new LocalExecutor(run.threads())) {
            assertThat(ex.map("square", run.tasks(), t -> t * t - 3, n -> { }))
                .isEqualTo(expected);
          }
        });
  }

  @Test
  void oneThreadRunsOnTheCallingThread() {
    Thread caller = Thread.currentThread();
    List<Boolean> same = new LocalExecutor(1).map("where", List.of(1, 2, 3),
        t -> Thread.currentThread() == caller, n -> { });
    assertThat(same).containsExactly(true, true, true);
  }

  @Test
  void severalThreadsAreUsed() {
    ConcurrentHashMap<String, Boolean> names = new ConcurrentHashMap<>();
    java.util.concurrent.CountDownLatch both = new java.util.concurrent.CountDownLatch(2);
    new LocalExecutor(2).map("meet", List.of(1, 2), t -> {
      names.put(Thread.currentThread().getName() + "@" + Thread.currentThread().getId(), true);
      both.countDown();
      try {
        // Each task waits for the other: only two threads running at once can finish.
        return both.await(30, java.util.concurrent.TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    }, n -> { });
    assertThat(names).hasSize(2);
  }

  @Test
  void progressEndsAtTheTaskCount() {
    AtomicInteger last = new AtomicInteger(-1);
    new LocalExecutor(3).map("count", List.of(5, 6, 7, 8, 9), t -> t, last::set);
    assertThat(last.get()).isEqualTo(5);
  }

  @Test
  void theFirstFailureInTaskOrderIsRethrown() {
    for (int threads : new int[] {1, 3}) {
      LocalExecutor ex = new LocalExecutor(threads);
      assertThatThrownBy(() -> ex.map("fail", List.of(1, 2, 3, 4), t -> {
        if (t >= 2) {
          throw new IllegalArgumentException("task " + t);
        }
        return t;
      }, n -> { })).isInstanceOf(IllegalArgumentException.class).hasMessage("task 2");
    }
  }

  @Test
  void describesItself() {
    assertThat(new LocalExecutor(1).description()).isEqualTo("local, 1 thread");
    assertThat(new LocalExecutor(4).description()).isEqualTo("local, 4 threads");
  }
}
