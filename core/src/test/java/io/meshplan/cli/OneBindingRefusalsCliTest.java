package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.model.Attention;
import io.meshplan.model.Fp8Training;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Overlaps;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ContextExchange;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.plan.TrainingConfig;
import io.meshplan.util.InputException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 37, step 1: a training configuration is bound to its model and cluster in one place
 * ({@link io.meshplan.plan.BoundConfig}), so every command refuses the same input with the same
 * exit code and the same one line. Seeded random configurations (degrees that do not divide the
 * GPUs, heads, layers or experts; CP on a sequence that does not split into 2 x CP chunks; VPP
 * without PP; sequence parallelism without TP; expert layouts on dense models; overlaps without
 * the layout they need; precisions and kernels the GPU lacks) are bound in the library, and each
 * one the library refuses is run through {@code simulate} and {@code export} (Megatron-LM,
 * DeepSpeed, torchtitan): the same code, the same line, that line the library's message in the
 * flags' words. The precision, kernel and batch refusals are also swept: a sweep point's refusal
 * is the same library message (in the grid's words, which are the library's).
 */
class OneBindingRefusalsCliTest {
  private static final String[] MODELS = {"llama2-7b", "llama3-8b", "mixtral-8x7b"};
  private static final String[] CLUSTERS = {"1x8:h100-80gb", "2x8:a100-80gb", "1x8:v100-32gb",
      "1x4:a100-40gb"};
  private static final int CASES = 300;

  /** One random configuration: its flags and the library's binding of it. */
  private record Case(List<String> flags, TrainingConfig config, ModelSpec model,
      ClusterSpec cluster) {
    /** The library's refusal, or empty when the configuration binds. */
    Optional<String> refusal() {
      try {
        config.bind(model, cluster);
        return Optional.empty();
      } catch (InputException | IllegalArgumentException e) {
        return Optional.of(e.getMessage());
      }
    }
  }

  @Test
  void seededRefusalsAreOneLineAndTheSameInSimulateAndEveryExport() {
    Random rnd = new Random(37);
    Map<String, Integer> byRule = new TreeMap<>();
    int refused = 0;
    for (int i = 0; i < CASES; i++) {
      Case c = randomCase(rnd);
      Optional<String> why = c.refusal();
      if (why.isEmpty()) {
        continue; // binds: pricing it is the other tests' business
      }
      refused++;
      byRule.merge(why.get().replaceAll("[0-9]+", "N").substring(0, 20), 1, Integer::sum);
      String line = "meshplan: error: " + FlagWords.reword(why.get(), FlagWords.CONFIG) + "\n";
      CliRun sim = CliRun.of(with(List.of("simulate"), c.flags()));
      assertThat(sim.err()).as(c.flags().toString()).isEqualTo(line);
      assertThat(sim.code()).as(c.flags().toString()).isEqualTo(ExitCodes.BAD_INPUT);
      assertThat(sim.out()).isEmpty();
      for (String to : List.of("megatron", "deepspeed", "torchtitan")) {
        CliRun ex = CliRun.of(with(List.of("export", "--to", to), c.flags()));
        assertThat(ex.err()).as(to + " " + c.flags()).isEqualTo(line);
        assertThat(ex.code()).as(to + " " + c.flags()).isEqualTo(ExitCodes.BAD_INPUT);
        assertThat(ex.out()).isEmpty();
      }
    }
    // The seed's mix: most random layouts break a rule, and the rules broken are many.
    assertThat(refused).as(byRule.toString()).isGreaterThan(CASES / 2);
    assertThat(byRule).as(byRule.toString()).hasSizeGreaterThanOrEqualTo(10);
  }

  @Test
  void sweepPointsRefuseWithTheLibrarysMessageThatSimulateAndExportPrint(@TempDir Path dir)
      throws Exception {
    Random rnd = new Random(3737);
    int compared = 0;
    for (int i = 0; i < 80 && compared < 6; i++) {
      String model = MODELS[rnd.nextInt(2)];
      String cluster = CLUSTERS[rnd.nextInt(CLUSTERS.length)];
      String dtype = new String[] {"auto", "bf16", "f16", "f32", "fp8"}[rnd.nextInt(5)];
      String attention = new String[] {"auto", "flash", "unfused"}[rnd.nextInt(3)];
      boolean bf16Reduce = rnd.nextBoolean();
      ClusterSpec cs = ClusterSpec.parse(cluster);
      ModelSpec m = Presets.get(model);
      int gpus = cs.gpuCount();
      TrainingConfig searched = TrainingConfig.searched(gpus, 0)
          .withOverlaps(Overlaps.DEFAULTS.withBf16GradReduce(bf16Reduce))
          .withAttention(attention.equals("auto") ? Optional.empty()
              : Optional.of(Attention.parse(attention)));
      if (!dtype.equals("auto")) {
        searched = searched.withDtype(Fp8Training.parse(dtype));
      }
      String why;
      try {
        searched.bind(m, cs);
        continue; // the point would be planned
      } catch (InputException e) {
        why = e.getMessage();
      }
      Path grid = dir.resolve("g" + i + ".yaml");
      Files.writeString(grid, "models: [" + model + "]\nseq: [" + m.seq() + "]\ngpus: ["
          + cs.gpu().name() + "]\nclusters: [" + cs.nodes() + "x" + cs.gpusPerNode()
          + "]\nglobalBatch: [" + gpus + "]\ngradReduceInBf16: [" + bf16Reduce
          + "]\nattention: [" + attention + "]\ndtype: [" + dtype + "]\n");
      Path jsonl = dir.resolve("g" + i + ".jsonl");
      CliRun sweep = CliRun.of("sweep", "--grid", grid.toString(), "--threads", "1", "--jsonl",
          jsonl.toString());
      if (sweep.code() == ExitCodes.BAD_INPUT && sweep.err().contains("no GPU of the grid")) {
        continue; // the grid's axis is refused as a whole: no GPU of it trains that precision
      }
      assertThat(sweep.code()).as(sweep.err()).isZero();
      JsonNode point = new ObjectMapper().readTree(Files.readAllLines(jsonl).get(0));
      assertThat(point.get("status").asText()).isEqualToIgnoringCase("rejected");
      assertThat(point.get("message").asText()).isEqualTo(why);
      List<String> flags = new ArrayList<>(List.of("--model", model, "--cluster", cluster,
          "--tp", "1", "--pp", "1", "--dp", String.valueOf(gpus), "--micro-batch", "1",
          "--global-batch", String.valueOf(gpus)));
      if (!dtype.equals("auto")) {
        flags.addAll(List.of("--dtype", dtype));
      }
      if (!attention.equals("auto")) {
        flags.addAll(List.of("--attention", attention));
      }
      if (bf16Reduce) {
        flags.add("--grad-reduce-in-bf16");
      }
      String line = "meshplan: error: " + FlagWords.reword(why, FlagWords.CONFIG) + "\n";
      for (List<String> head : List.of(List.of("simulate"), List.of("export", "--to",
          "megatron"))) {
        CliRun r = CliRun.of(with(head, flags));
        assertThat(r.err()).as(head + " " + flags).isEqualTo(line);
        assertThat(r.code()).isEqualTo(ExitCodes.BAD_INPUT);
      }
      compared++;
    }
    assertThat(compared).isEqualTo(6);
  }

  /** A random configuration, often broken in one or more ways. */
  private static Case randomCase(Random rnd) {
    String model = MODELS[rnd.nextInt(MODELS.length)];
    String cluster = CLUSTERS[rnd.nextInt(CLUSTERS.length)];
    ClusterSpec cs = ClusterSpec.parse(cluster);
    int tp = pick(rnd, 1, 2, 3, 4, 8);
    int pp = pick(rnd, 1, 1, 2, 3, 4);
    int vpp = pick(rnd, 1, 1, 1, 2, 3);
    int cp = pick(rnd, 1, 1, 1, 2, 3);
    int ep = pick(rnd, 1, 1, 1, 2, 3);
    int etp = pick(rnd, 1, 1, 1, 1, 2);
    int dp = Math.max(1, cs.gpuCount() / (tp * pp * cp)) * pick(rnd, 1, 1, 1, 1, 2);
    int micro = pick(rnd, 1, 1, 2);
    int global = micro * dp * pick(rnd, 4, 8, 3);
    boolean sp = rnd.nextInt(3) > 0;
    int zero = pick(rnd, 0, 0, 1, 2, 3);
    boolean gpipe = vpp == 1 && rnd.nextInt(6) == 0;
    Recompute recompute = new Recompute[] {Recompute.NONE, Recompute.SELECTIVE,
        Recompute.FULL}[rnd.nextInt(3)];
    String dtype = new String[] {"", "", "", "f16", "f32", "fp8"}[rnd.nextInt(6)];
    String attention = new String[] {"", "", "flash", "unfused"}[rnd.nextInt(4)];
    boolean gradReduce = rnd.nextBoolean();
    boolean paramGather = gradReduce && rnd.nextInt(3) == 0;
    boolean tpComm = rnd.nextInt(4) == 0;
    boolean bf16Reduce = rnd.nextInt(5) == 0;
    List<String> f = new ArrayList<>(List.of("--model", model, "--cluster", cluster,
        "--tp", String.valueOf(tp), "--pp", String.valueOf(pp), "--dp", String.valueOf(dp),
        "--micro-batch", String.valueOf(micro), "--global-batch", String.valueOf(global),
        "--recompute", recompute.label(), "--zero-stage", String.valueOf(zero)));
    add(f, vpp > 1, "--vpp", vpp);
    add(f, cp > 1, "--cp", cp);
    add(f, ep > 1, "--ep", ep);
    add(f, etp > 1, "--etp", etp);
    add(f, sp, "--sequence-parallel");
    add(f, gpipe, "--schedule", "gpipe");
    add(f, !dtype.isEmpty(), "--dtype", dtype);
    add(f, !attention.isEmpty(), "--attention", attention);
    add(f, gradReduce, "--overlap-grad-reduce");
    add(f, paramGather, "--overlap-param-gather");
    add(f, tpComm, "--tp-comm-overlap");
    add(f, bf16Reduce, "--grad-reduce-in-bf16");
    ParallelConfig layout = new ParallelConfig(tp, pp, dp, vpp, micro, global, recompute, sp,
        zero).withContext(cp, ContextExchange.P2P).withExperts(ep, etp);
    TrainingConfig config = TrainingConfig.of(layout, gpipe)
        .withAttention(attention.isEmpty() ? Optional.empty()
            : Optional.of(Attention.parse(attention)))
        .withOverlaps(new Overlaps(gradReduce, paramGather, tpComm, true, true)
            .withBf16GradReduce(bf16Reduce));
    if (!dtype.isEmpty()) {
      config = config.withDtype(Fp8Training.parse(dtype));
    }
    return new Case(f, config, Presets.get(model), cs);
  }

  private static int pick(Random rnd, int... values) {
    return values[rnd.nextInt(values.length)];
  }

  private static void add(List<String> f, boolean when, String flag, Object... value) {
    if (when) {
      f.add(flag);
      for (Object v : value) {
        f.add(String.valueOf(v));
      }
    }
  }

  private static String[] with(List<String> head, List<String> tail) {
    List<String> all = new ArrayList<>(head);
    all.addAll(tail);
    return all.toArray(String[]::new);
  }
}
