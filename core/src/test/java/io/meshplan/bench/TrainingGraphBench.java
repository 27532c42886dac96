package io.meshplan.bench;

import io.meshplan.model.ActivationMemory;
import io.meshplan.model.LayerRef;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.model.TrainingGraph;
import io.meshplan.model.TrainingGraphBuilder;
import io.meshplan.model.TrainingOptions;
import java.util.Locale;

/**
 * Build time and size of training graphs: one block at micro-batch 1 for each preset and
 * recomputation mode, and whole models. Run after {@code mvn -o -q test-compile}:
 *
 * <pre>
 * java -cp core/target/test-classes:core/target/meshplan.jar io.meshplan.bench.TrainingGraphBench
 * </pre>
 *
 * Columns: model, part, sequence, recomputation, instructions, build milliseconds (best of 20
 * after 20 warm-up builds), kept activation bytes of block 0 (MiB).
 */
public final class TrainingGraphBench {
  private TrainingGraphBench() {}

  /**
   * Runs the benchmark.
   *
   * @param args unused
   */
  public static void main(String[] args) {
    System.out.printf(Locale.ROOT, "%-14s %-7s %5s %-9s %7s %9s %12s%n", "model", "part", "seq",
        "recompute", "instrs", "build ms", "kept MiB");
    String[][] cases = {{"llama2-70b", "4096"}, {"llama3.1-405b", "8192"},
        {"gpt-1t", "2048"}, {"gpt3-175b", "2048"}, {"mistral-7b", "4096"}};
    for (String[] c : cases) {
      ModelSpec spec = Presets.get(c[0]);
      int seq = Integer.parseInt(c[1]);
      for (Recompute r : Recompute.values()) {
        row(spec, "block", seq, r, TrainingOptions.oneBlock(spec, 1, seq).withRecompute(r));
      }
    }
    ModelSpec gpt = Presets.get("gpt-1.7b");
    row(gpt, "model", 2048, Recompute.NONE, TrainingOptions.of(gpt).withWorkload(1, 2048));
    ModelSpec llama = Presets.get("llama2-7b");
    row(llama, "model", 4096, Recompute.FULL, TrainingOptions.of(llama).withWorkload(1, 4096)
        .withRecompute(Recompute.FULL));
  }

  private static void row(ModelSpec spec, String part, int seq, Recompute r, TrainingOptions o) {
    TrainingGraph tg = null;
    double best = Double.POSITIVE_INFINITY;
    for (int i = 0; i < 40; i++) {
      long t0 = System.nanoTime();
      tg = TrainingGraphBuilder.build(spec, o);
      double ms = (System.nanoTime() - t0) / 1e6;
      if (i >= 20) {
        best = Math.min(best, ms);
      }
    }
    double kept = ActivationMemory.savedBytes(tg, LayerRef.block(0)) / (1024.0 * 1024);
    System.out.printf(Locale.ROOT, "%-14s %-7s %5d %-9s %7d %9.2f %12.1f%n", spec.name(), part,
        seq, r.name().toLowerCase(Locale.ROOT), tg.graph().size(), best, kept);
  }
}
