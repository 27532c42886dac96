package io.meshplan.exec;

import io.meshplan.util.Require;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

/**
 * Runs tasks in this process on a fixed number of threads and returns their results in task
 * order, so that the outcome does not depend on the number of threads. With one thread the tasks
 * run one after another on the calling thread. A failed task's exception is rethrown, the first
 * in task order.
 *
 * <p>Besides the serializable {@link #map}, {@link #runAll} runs in-process work that captures
 * local state (layer solves and stage DPs of one plan).
 */
public final class LocalExecutor implements TaskExecutor {
  private final int threads;

  /**
   * Creates the executor.
   *
   * @param threads worker threads, at least 1
   */
  public LocalExecutor(int threads) {
    this.threads = Require.positive(threads, "threads");
  }

  /**
   * One thread per processor.
   *
   * @return the executor
   */
  public static LocalExecutor perProcessor() {
    return new LocalExecutor(Runtime.getRuntime().availableProcessors());
  }

  /**
   * The worker threads.
   *
   * @return at least 1
   */
  public int threads() {
    return threads;
  }

  @Override
  public <T extends Serializable, R extends Serializable> List<R> map(String job, List<T> tasks,
      TaskFunction<T, R> f, IntConsumer done) {
    Require.nonNull(f, "task function");
    Require.nonNull(done, "done");
    AtomicInteger finished = new AtomicInteger();
    List<Callable<R>> calls = new ArrayList<>(tasks.size());
    for (T t : tasks) {
      calls.add(() -> {
        R r = f.apply(t);
        done.accept(finished.incrementAndGet());
        return r;
      });
    }
    List<R> out = runAll(calls, "meshplan-" + job);
    done.accept(tasks.size());
    return out;
  }

  /**
   * Runs in-process tasks.
   *
   * @param tasks the tasks
   * @param name the worker threads' name
   * @param <R> the result type
   * @return the results, in task order
   */
  public <R> List<R> runAll(List<? extends Callable<R>> tasks, String name) {
    int n = Math.min(tasks.size(), threads);
    if (n <= 1) {
      List<R> out = new ArrayList<>(tasks.size());
      for (Callable<R> c : tasks) {
        try {
          out.add(c.call());
        } catch (RuntimeException e) {
          throw e;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      }
      return out;
    }
    ExecutorService pool = Executors.newFixedThreadPool(n, r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    });
    try {
      List<R> out = new ArrayList<>(tasks.size());
      for (Future<R> f : pool.invokeAll(tasks)) {
        out.add(Futures.await(f, "planning"));
      }
      return out;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while planning", e);
    } finally {
      pool.shutdownNow();
    }
  }

  @Override
  public boolean inProcess() {
    return true;
  }

  @Override
  public String description() {
    return "local, " + threads + (threads == 1 ? " thread" : " threads");
  }

  @Override
  public void close() {
    // Pools live for one call each.
  }
}
