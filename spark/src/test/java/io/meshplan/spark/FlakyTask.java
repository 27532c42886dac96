package io.meshplan.spark;

import io.meshplan.exec.TaskFunction;
import io.meshplan.sweep.PointResult;
import io.meshplan.sweep.PointTask;
import io.meshplan.sweep.SweepPoint;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A sweep task for tests: records which process runs each attempt in a marker directory (file
 * {@code start-INDEX-PID-NANOS}), and, when {@code failFirst}, throws on a point's first attempt
 * so that the engine must retry it.
 *
 * @param markers the directory
 * @param failFirst whether the first attempt of each point throws
 * @param task the real work
 */
record FlakyTask(String markers, boolean failFirst, PointTask task)
    implements TaskFunction<SweepPoint, PointResult> {
  private static final long serialVersionUID = 1L;

  @Override
  public PointResult apply(SweepPoint p) {
    Path dir = Path.of(markers);
    try {
      Files.createFile(dir.resolve("start-" + p.index() + "-" + ProcessHandle.current().pid()
          + "-" + System.nanoTime()));
      if (failFirst) {
        try {
          Files.createFile(dir.resolve("failed-" + p.index()));
          throw new IllegalStateException("first attempt of point " + p.index() + " fails");
        } catch (FileAlreadyExistsException again) {
          // A retry: run normally.
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return task.apply(p);
  }
}
