package io.meshplan.cli;

import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import me.tongfei.progressbar.ProgressBarStyle;

/**
 * A progress bar on stderr while a long search runs, drawn by the progressbar library; nothing is
 * drawn when the process is not attached to a terminal (scripts, CI, tests).
 */
final class Progress implements AutoCloseable {
  private final ProgressBar bar;

  private Progress(ProgressBar bar) {
    this.bar = bar;
  }

  /**
   * Starts a bar counting to 100 percent.
   *
   * @param task what is being done
   * @return the bar (inert without a terminal)
   */
  static Progress start(String task) {
    if (System.console() == null) {
      return new Progress(null);
    }
    return new Progress(new ProgressBarBuilder().setTaskName(task).setInitialMax(100)
        .setStyle(ProgressBarStyle.ASCII).setUnit("%", 1).continuousUpdate().build());
  }

  /**
   * A bar that draws nothing (when another component shows progress).
   *
   * @return the inert bar
   */
  static Progress none() {
    return new Progress(null);
  }

  /**
   * Moves the bar.
   *
   * @param percent done, 0 to 100
   */
  void update(int percent) {
    if (bar != null) {
      bar.stepTo(Math.max(0, Math.min(100, percent)));
    }
  }

  @Override
  public void close() {
    if (bar != null) {
      bar.close();
    }
  }
}
