package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.interop.PlanResult;
import io.meshplan.model.Presets;
import io.meshplan.planner.Planner;
import io.meshplan.planner.PlannerOptions;
import io.meshplan.planner.Pricing;
import io.meshplan.planner.TrainingJob;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The progress line of {@code plan} on a terminal advances as the search's tasks finish (it sat
 * at "planning: 0%" until the end): a small plan drawn on a fake terminal shows percentages that
 * only grow, several of them, and 100% last.
 */
class PlanProgressTest {
  private static final Pattern PERCENT = Pattern.compile("\rplanning: (\\d+)%");

  private static List<Integer> drawn(int threads) {
    StringWriter terminal = new StringWriter();
    AtomicLong clock = new AtomicLong();
    TrainingJob job = TrainingJob.of(Presets.get("opt-125m").withLayers(4).withSequence(512),
        ClusterSpec.parse("2x4:a100-40gb")).withGlobalBatch(32);
    PlanResult r;
    try (Progress p = new Progress(new PrintWriter(terminal), true, clock::get, "planning", "%",
        100)) {
      r = Planner.plan(job, Pricing.catalog(), PlannerOptions.defaults().withThreads(threads)
          .withProgress(p::update));
    }
    assertThat(r).isInstanceOf(PlanResult.Planned.class);
    List<Integer> seen = new ArrayList<>();
    Matcher m = PERCENT.matcher(terminal.toString());
    while (m.find()) {
      seen.add(Integer.parseInt(m.group(1)));
    }
    return seen;
  }

  @Test
  void thePercentagesGrowAndReach100() {
    for (int threads : new int[] {1, 4}) {
      List<Integer> seen = drawn(threads);
      // Every layer priced, every microbatch size and every interleaved search is a step: this
      // plan takes over a hundred, so the line moves at nearly every percent. It used to move
      // once per microbatch size only (at most 6 here: 1, 2, 4, 8, 16, 32 sequences), after
      // sitting at 0% while the layers were priced.
      assertThat(seen.size()).as(seen.toString()).isGreaterThan(20);
      for (int i = 1; i < seen.size(); i++) {
        assertThat(seen.get(i)).as(seen.toString()).isGreaterThan(seen.get(i - 1));
      }
      assertThat(seen.get(seen.size() - 1)).isEqualTo(100);
      assertThat(seen.subList(0, seen.size() - 1)).allMatch(p -> p < 100);
    }
  }
}
