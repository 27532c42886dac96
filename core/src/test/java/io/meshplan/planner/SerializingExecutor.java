package io.meshplan.planner;

import io.meshplan.exec.TaskExecutor;
import io.meshplan.exec.TaskFunction;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * An executor that treats every task as a distributed engine does: the function and each task go
 * through Java serialization before they run, and each result comes back through it, so nothing
 * the caller holds in memory reaches the task. What a task finds only in the caller's process
 * (a transient field) is gone, as on a Spark executor.
 */
final class SerializingExecutor implements TaskExecutor {
  private int shipped;

  @Override
  public <T extends Serializable, R extends Serializable> List<R> map(String job, List<T> tasks,
      TaskFunction<T, R> f, IntConsumer done) {
    List<R> out = new ArrayList<>();
    for (T t : tasks) {
      @SuppressWarnings("unchecked")
      TaskFunction<T, R> remote = (TaskFunction<T, R>) copy(f);
      @SuppressWarnings("unchecked")
      T task = (T) copy(t);
      @SuppressWarnings("unchecked")
      R result = (R) copy(remote.apply(task));
      out.add(result);
      shipped++;
      done.accept(out.size());
    }
    return out;
  }

  /** The tasks that went through serialization. */
  int shipped() {
    return shipped;
  }

  static Object copy(Object o) {
    try {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
        out.writeObject(o);
      }
      try (ObjectInputStream in = new ObjectInputStream(
          new ByteArrayInputStream(bytes.toByteArray()))) {
        return in.readObject();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public String description() {
    return "serializing, in this process";
  }

  @Override
  public void close() {
  }
}
