package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The progress line: its text, its redraws on a fake terminal, and silence elsewhere. */
class ProgressTest {
  private static final long S = 1_000_000_000L;

  @Test
  void lineStatesPhaseDoneTotalSpentAndLeft() {
    // 17 of 200 points in 62 s: 62 * 183 / 17 = 667.4 s left, rounded up to 668 s = 11:08.
    assertThat(ProgressLine.render("sweep", 17, 200, "points", 62 * S))
        .isEqualTo("sweep: 17/200 points (8%), 1:02 spent, about 11:08 left");
    // 25% after 10 s: 30 s left.
    assertThat(ProgressLine.render("planning", 25, 100, "%", 10 * S))
        .isEqualTo("planning: 25%, 0:10 spent, about 0:30 left");
    // Nothing done yet: no estimate; all done: none needed.
    assertThat(ProgressLine.render("sweep", 0, 200, "points", 3 * S))
        .isEqualTo("sweep: 0/200 points (0%), 0:03 spent");
    assertThat(ProgressLine.render("sweep", 200, 200, "points", 3723 * S))
        .isEqualTo("sweep: 200/200 points (100%), 1:02:03 spent");
  }

  @Test
  void workOfUnknownLengthShowsTheTimeSpentOnly() {
    assertThat(ProgressLine.render("shard: solving", 0, 0, "", 75 * S))
        .isEqualTo("shard: solving: 1:15 spent");
    StringWriter out = new StringWriter();
    AtomicLong now = new AtomicLong();
    try (Progress p = new Progress(new PrintWriter(out), true, now::get, "shard: solving", "",
        0)) {
      now.addAndGet(3 * S);
      p.update(5);
      p.redraw();
    }
    String line = "shard: solving: 0:03 spent";
    assertThat(out.toString()).isEqualTo("\r" + line + "\r" + " ".repeat(line.length()) + "\r");
  }

  @Test
  void duringReturnsTheWorksResultAndDrawsNothingWithoutATerminal() {
    StringWriter out = new StringWriter();
    assertThat(Progress.during(new PrintWriter(out), false, "simulate", () -> 42)).isEqualTo(42);
    assertThat(out.toString()).isEmpty();
  }

  @Test
  void terminalGetsALineRedrawnInPlaceAndErasedAtTheEnd() {
    StringWriter out = new StringWriter();
    AtomicLong now = new AtomicLong(5 * S);
    try (Progress p = new Progress(new PrintWriter(out), true, now::get, "sweep", "points", 4)) {
      now.addAndGet(2 * S);
      p.update(1);
      now.addAndGet(4 * S);
      p.redraw();
      p.update(1);
      now.addAndGet(2 * S);
      p.update(2);
    }
    // 1 of 4 after 2 s: 6 s left; 6 s: still 1, 18 s left; 2 of 4 after 8 s: 8 s left. The
    // second line is as long as the first, the third is padded over the longer second, and
    // the end erases the widest line.
    String first = "sweep: 1/4 points (25%), 0:02 spent, about 0:06 left";
    String second = "sweep: 1/4 points (25%), 0:06 spent, about 0:18 left";
    String third = "sweep: 2/4 points (50%), 0:08 spent, about 0:08 left";
    assertThat(out.toString()).isEqualTo("\r" + first + "\r" + second + "\r" + third
        + "\r" + " ".repeat(third.length()) + "\r");
  }

  @Test
  void notATerminalMeansNoOutputAtAll() {
    StringWriter out = new StringWriter();
    AtomicLong now = new AtomicLong();
    try (Progress p = new Progress(new PrintWriter(out), false, now::get, "planning", "%", 100)) {
      for (int i = 0; i <= 100; i += 10) {
        now.addAndGet(S);
        p.update(i);
        p.redraw();
      }
    }
    assertThat(out.toString()).isEmpty();
  }

  @Test
  void quietOrNoConsoleDrawsNothing() {
    StringWriter out = new StringWriter();
    try (Progress p = Progress.start(new PrintWriter(out), true, "sweep", "points", 10)) {
      p.update(5);
    }
    assertThat(out.toString()).isEmpty();
  }
}
