package io.meshplan.interop;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Runs independent planning tasks on one thread per processor and returns their results in task
 * order, so that what the caller makes of them does not depend on the number of threads.
 */
final class Parallel {
  private Parallel() {}

  /**
   * Runs the tasks.
   *
   * @param tasks the tasks
   * @param name the worker threads' name
   * @param <T> the result type
   * @return the results, in task order
   */
  static <T> List<T> runAll(List<? extends Callable<T>> tasks, String name) {
    int threads = Math.max(1, Math.min(tasks.size(), Runtime.getRuntime().availableProcessors()));
    ExecutorService pool = Executors.newFixedThreadPool(threads, r -> {
      Thread t = new Thread(r, name);
      t.setDaemon(true);
      return t;
    });
    try {
      List<T> out = new ArrayList<>();
      for (Future<T> f : pool.invokeAll(tasks)) {
        out.add(f.get());
      }
      return out;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while planning", e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      if (e.getCause() instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(e.getCause());
    } finally {
      pool.shutdownNow();
    }
  }
}
