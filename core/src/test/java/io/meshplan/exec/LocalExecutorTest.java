package io.meshplan.exec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class LocalExecutorTest {
  /** Results come back in task order whatever the thread count: compared with a plain loop. */
  @Property(tries = 50)
  void resultsInTaskOrder(@ForAll @Size(max = 40) List<@IntRange(min = -1000, max = 1000) Integer>
      tasks, @ForAll @IntRange(min = 1, max = 6) int threads) {
    List<Integer> expected = new ArrayList<>();
    for (int t : tasks) {
      expected.add(t * t - 3);
    }
    try (LocalExecutor ex = new LocalExecutor(threads)) {
      assertThat(ex.map("square", tasks, t -> t * t - 3, n -> { })).isEqualTo(expected);
    }
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
