package io.meshplan.doctor;

import io.meshplan.util.Require;

/**
 * A sysfs entry that could not be read or parsed. On real systems some reads fail by design (for
 * example {@code gid_attrs/types/<i>} of an unused GID gives EINVAL), so the reader skips the entry
 * and keeps going.
 *
 * @param subject what it concerns: {@code device:port}, an interface or a directory
 * @param path the path relative to the sysfs root, for example {@code
 *     class/infiniband/mlx5_0/ports/1/gid_attrs/types/4}
 * @param detail what went wrong and what was done about it
 */
public record ReadProblem(String subject, String path, String detail) {
  /** Validates. */
  public ReadProblem {
    Require.nonNull(subject, "subject");
    Require.nonNull(path, "path");
    Require.nonNull(detail, "detail");
  }

  /**
   * The one-line warning for this problem.
   *
   * @return for example {@code mlx5_0:1: class/.../types/4: unreadable (file missing); GID 4
   *     skipped}
   */
  public String message() {
    return subject + ": " + path + ": " + detail;
  }
}
