package io.meshplan.sweep;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.testing.Cases;
import io.meshplan.util.InputException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class SweepGridReaderTest {
  private static final String OK = """
      models: [opt-125m, llama2-7b]
      seq: 2048
      gpus: [h100-80gb]
      clusters: [1x8, 4x8]
      globalBatch: [512, 1024, 2048]
      microbatches: [auto, 64]
      """;

  @Test
  void pointsAreTheProductInAxisOrder() {
    SweepGrid g = SweepGridReader.parse(OK, "g.yaml");
    // 2 models x 1 seq x 1 gpu x 1 default fabric x 2 clusters x 3 batches x 2 micro x 1 = 24.
    assertThat(g.size()).isEqualTo(24);
    List<SweepPoint> p = g.points();
    assertThat(p).hasSize(24);
    // The last axis varies fastest: microbatches, then global batch, then clusters.
    assertThat(p.get(0)).isEqualTo(new SweepPoint(0, "opt-125m", 2048, 1, 8, "h100-80gb",
        "ib-ndr400", 512, 0, false));
    assertThat(p.get(1).microbatches()).isEqualTo(64);
    assertThat(p.get(2).globalBatch()).isEqualTo(1024);
    assertThat(p.get(6).nodes()).isEqualTo(4);
    assertThat(p.get(12).model()).isEqualTo("llama2-7b");
    assertThat(p.get(23).index()).isEqualTo(23);
    assertThat(p.get(23).cluster()).isEqualTo("4x8:h100-80gb:ib-ndr400");
  }

  /**
   * The dispatcher axis varies fastest after the overlap axes: two dispatchers double the points,
   * each point says its own in the CSV's last column and in JSON Lines, and a name no dispatcher
   * has is refused in one line naming its position.
   */
  @Test
  void dispatchersAreAnAxis() {
    SweepGrid g = SweepGridReader.parse(OK + "moeDispatcher: [alltoall, hybridep]\n", "g.yaml");
    assertThat(g.size()).isEqualTo(48);
    List<SweepPoint> p = g.points();
    assertThat(p.get(0).overlaps().dispatcher())
        .isEqualTo(io.meshplan.model.ExpertDispatcher.ALLTOALL);
    assertThat(p.get(1).overlaps().dispatcher())
        .isEqualTo(io.meshplan.model.ExpertDispatcher.HYBRIDEP);
    // Without the field every point keeps NCCL's all-to-all.
    assertThat(SweepGridReader.parse(OK, "g.yaml").points()).allMatch(q ->
        q.overlaps().dispatcher() == io.meshplan.model.ExpertDispatcher.ALLTOALL);
    bad(OK + "moeDispatcher: [alltoall, nccl]\n", "field 'moeDispatcher[1]': expected alltoall, "
        + "deepep, hybridep, got 'nccl'");
    bad(OK + "moeDispatcher: [3]\n", "field 'moeDispatcher[0]'");
    assertThat(SweepCsv.HEADER.get(SweepCsv.HEADER.size() - 1)).isEqualTo("moe_dispatcher");
  }

  @Test
  void examplesParse() {
    assertThat(SweepGridReader.read(Path.of("examples/sweep.yaml")).size()).isEqualTo(12);
    // 3 models x 2 sequences x 11 clusters x 3 batches.
    assertThat(SweepGridReader.read(Path.of("examples/sweep-200.yaml")).size()).isEqualTo(198);
  }

  private static void bad(String yaml, String message) {
    assertThatThrownBy(() -> SweepGridReader.parse(yaml, "g.yaml"))
        .isInstanceOf(InputException.class)
        .hasMessageStartingWith("g.yaml")
        .hasMessageContaining(message)
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
  }

  @Test
  void everyBadValueIsOneLineNamingTheField() {
    String base = "gpus: [h100-80gb]\nclusters: [1x8]\nglobalBatch: 64\nseq: 1024\n";
    bad(base + "models: [opt-125m, llama9]\n", "field 'models[1]': unknown model 'llama9'");
    bad(base.replace("seq: 1024", "seq: 0") + "models: opt-125m\n",
        "field 'seq': expected an integer from 1 to 1048576, got '0'");
    bad(base.replace("seq: 1024", "seq: [1024, abc]") + "models: opt-125m\n",
        "field 'seq[1]': expected an integer");
    bad(base.replace("seq: 1024", "seq: 2.5") + "models: opt-125m\n", "field 'seq'");
    bad(base.replace("1x8", "8y8") + "models: opt-125m\n",
        "field 'clusters[0]': expected NODESxGPUS_PER_NODE");
    bad(base.replace("1x8", "100000x64") + "models: opt-125m\n", "at most 1048576 GPUs");
    bad(base.replace("1x8", "1x0") + "models: opt-125m\n", "1 to 64 GPUs per node");
    bad(base.replace("h100-80gb", "tpu") + "models: opt-125m\n", "unknown gpu 'tpu'");
    bad(base + "models: opt-125m\nfabrics: [warp]\n", "unknown fabric 'warp'");
    bad(base + "models: opt-125m\nmicrobatches: [0]\n", "field 'microbatches[0]'");
    bad(base + "models: opt-125m\noverlapGradReduce: [maybe]\n",
        "expected true or false");
    // A quoted 'true' is text, and the refusal says so rather than 'got 'true''.
    bad(base + "models: opt-125m\noverlapGradReduce: ['true']\n",
        "expected true or false, got the quoted text 'true'");
    bad(base + "models: opt-125m\ncolour: red\n", "unknown field 'colour'");
    bad(base + "models: []\n", "field 'models': needs at least one value");
    bad(base, "field 'models' is required");
    bad(base + "models: opt-125m\nmodels: opt-350m\n", "key 'models' is given twice");
    bad("[1, 2]", "expected a YAML mapping");
    bad("models: [opt-125m\n", "not a valid YAML sweep grid: line");
    bad(base.replace("globalBatch: 64", "globalBatch: 99999999999") + "models: opt-125m\n",
        "field 'globalBatch'");
  }

  @Test
  void gridsBeyondTheCapAreRefused() {
    // 101 sequence lengths x 1,000 global batches = 101,000 points > 100,000.
    StringBuilder seq = new StringBuilder("seq: [");
    for (int i = 1; i <= 101; i++) {
      seq.append(i == 1 ? "" : ", ").append(i * 16);
    }
    StringBuilder gb = new StringBuilder("globalBatch: [");
    for (int i = 1; i <= 1000; i++) {
      gb.append(i == 1 ? "" : ", ").append(i);
    }
    bad("models: opt-125m\ngpus: h100-80gb\nclusters: 1x8\n" + seq + "]\n" + gb + "]\n",
        "more than 100000 points");
    // Three overlap fields of 5,000 repeated values would be 1.25e11 combinations; the first
    // repeat is refused before any is built.
    String many = "[true" + ", true".repeat(4999) + "]";
    bad("models: opt-125m\nseq: 512\ngpus: h100-80gb\nclusters: 1x8\nglobalBatch: 64\n"
        + "overlapGradReduce: " + many + "\ntpCommOverlap: " + many + "\nfsdpPrefetch: " + many
        + "\n", "field 'overlapGradReduce[1]': 'true' repeats an earlier value; list each once");
  }

  /** Any text is a grid or one line of bad input, never another exception. */
  @Test
  void anyTextIsAGridOrOneLine() {
    List<String> edges = List.of("", " ", "\0", "\n", "\r", "\r\n", "\t", "\uFFFF", "\uD800",
        "\uDFFF", "\uD83D\uDE00", "a".repeat(255));
    Cases.check(47, 300, edges, g -> g.anyString(255), junk -> {
      for (String text : new String[] {junk, OK.replace("2048", junk),
          OK.replace("1x8", junk), OK.replace("opt-125m", junk)}) {
        try {
          SweepGrid g = SweepGridReader.parse(text, "g.yaml");
          assertThat(g.size()).isBetween(1, SweepGrid.MAX_POINTS);
        } catch (InputException e) {
          assertThat(e.getMessage()).startsWith("g.yaml").doesNotContain("\n");
        }
      }
    });
  }

  /**
   * {@code attention} is an axis like the others, last and fastest; absent, every point runs the
   * GPU's default ({@code auto}). 1 model x 1 seq x 1 gpu x 1 cluster x 1 batch x 1 micro x 1
   * overlap x 2 attention = 2 points.
   */
  @Test
  void attentionIsAnAxis() {
    String base = "models: opt-125m\nseq: 1024\ngpus: [v100-32gb]\nclusters: [1x8]\n"
        + "globalBatch: 64\n";
    assertThat(SweepGridReader.parse(base, "g.yaml").points().get(0).attention())
        .isEqualTo("auto");
    List<SweepPoint> p = SweepGridReader.parse(base + "attention: [flash, unfused]\n", "g.yaml")
        .points();
    assertThat(p).extracting(SweepPoint::attention).containsExactly("flash", "unfused");
    bad(base + "attention: [fused]\n", "field 'attention[0]': expected auto, flash or unfused");
    // Flash on a V100 point is refused by that point alone, in the planner's words.
    PointResult r = new PointEvaluator(new io.meshplan.interop.cost.LayerCostCache(),
        io.meshplan.intraop.SolverOptions.defaults()).evaluate(p.get(0), false, x -> { });
    assertThat(r.status()).isEqualTo(PointStatus.REJECTED);
    assertThat(r.message()).contains("flash attention needs Ampere or later");
  }

  /**
   * {@code fusedCrossEntropy} is an overlap axis: absent, every point prices the frameworks' fp32
   * loss; {@code [false, true]} doubles the points, and the fused point of an otherwise equal
   * pair is the faster (1 of each other axis x 2 = 2 points).
   */
  @Test
  void theFusedCrossEntropyIsAnAxis() {
    String base = "models: opt-125m\nseq: 1024\ngpus: [a100-80gb]\nclusters: [1x8]\n"
        + "globalBatch: 64\n";
    assertThat(SweepGridReader.parse(base, "g.yaml").points()).extracting(
        q -> q.overlaps().lossFusion()).containsExactly(false);
    List<SweepPoint> p = SweepGridReader.parse(base + "fusedCrossEntropy: [false, true]\n",
        "g.yaml").points();
    assertThat(p).extracting(q -> q.overlaps().lossFusion()).containsExactly(false, true);
    bad(base + "fusedCrossEntropy: [sometimes]\n", "fusedCrossEntropy");
    PointEvaluator ev = new PointEvaluator(new io.meshplan.interop.cost.LayerCostCache(),
        io.meshplan.intraop.SolverOptions.defaults());
    PointResult fp32 = ev.evaluate(p.get(0), false, x -> { });
    PointResult fused = ev.evaluate(p.get(1), false, x -> { });
    assertThat(fused.iterationSeconds()).isLessThan(fp32.iterationSeconds());
  }

  /**
   * {@code gradReduceInBf16} is an axis too: absent, gradients reduce in fp32; {@code [false,
   * true]} doubles the points, and on a GPU that trains in f16 only (V100) the bf16 point is
   * rejected with the reason in its row, as {@code plan} refuses the flag there; on A100 it
   * plans.
   */
  @Test
  void theBf16GradientReductionIsAnAxis() {
    String base = "models: opt-125m\nseq: 1024\ngpus: [a100-80gb, v100-32gb]\n"
        + "clusters: [1x8]\nglobalBatch: 64\n";
    assertThat(SweepGridReader.parse(base, "g.yaml").points()).extracting(
        q -> q.overlaps().bf16GradReduce()).containsOnly(false);
    List<SweepPoint> p = SweepGridReader.parse(base + "gradReduceInBf16: [false, true]\n",
        "g.yaml").points();
    assertThat(p).hasSize(4);
    bad(base + "gradReduceInBf16: [maybe]\n", "gradReduceInBf16");
    PointEvaluator ev = new PointEvaluator(new io.meshplan.interop.cost.LayerCostCache(),
        io.meshplan.intraop.SolverOptions.defaults());
    for (SweepPoint q : p) {
      PointResult r = ev.evaluate(q, false, x -> { });
      if (q.overlaps().bf16GradReduce() && q.gpu().equals("v100-32gb")) {
        assertThat(r.status()).isEqualTo(PointStatus.REJECTED);
        assertThat(r.message()).contains("--grad-reduce-in-bf16 needs bf16 training");
      } else {
        assertThat(r.status()).as(q.toString()).isEqualTo(PointStatus.OK);
      }
    }
  }

  /**
   * A {@code dtype} may name its FP8 recipe ({@code fp8:tensorwise}, {@code fp8:mxfp8}, {@code
   * fp8:nvfp4}; {@code fp8} and {@code fp8:delayed} are delayed scaling, written {@code fp8}):
   * each point is priced in its recipe, a block-scaled recipe on a Hopper GPU is rejected in its
   * row, a grid none of whose GPUs runs it is refused, and a recipe after another precision or
   * an unknown one is refused in one line.
   */
  @Test
  void theFp8RecipeIsPartOfTheDtypeAxis() {
    String base = "models: llama3-8b\nseq: 4096\ngpus: [gb200, h100-80gb]\nclusters: [2x4]\n"
        + "globalBatch: 64\n";
    SweepGrid g = SweepGridReader.parse(base
        + "dtype: [fp8, fp8:tensorwise, FP8:NVFP4]\n", "g.yaml");
    assertThat(g.dtypes()).containsExactly("fp8", "fp8:tensorwise", "fp8:nvfp4");
    // fp8:delayed is fp8: listed beside it, a value twice.
    bad(base + "dtype: [fp8, fp8:delayed]\n", "field 'dtype[1]': 'fp8:delayed' repeats an "
        + "earlier value");
    PointEvaluator ev = new PointEvaluator(new io.meshplan.interop.cost.LayerCostCache(),
        io.meshplan.intraop.SolverOptions.defaults());
    java.util.Map<String, Double> gb200 = new java.util.HashMap<>();
    for (SweepPoint q : SweepGridReader.parse(base + "dtype: [fp8:tensorwise, fp8:nvfp4]\n",
        "g.yaml").points()) {
      PointResult r = ev.evaluate(q, false, x -> { });
      if (q.gpu().equals("h100-80gb") && q.dtype().equals("fp8:nvfp4")) {
        assertThat(r.status()).isEqualTo(PointStatus.REJECTED);
        assertThat(r.message()).contains("nvfp4 (4-bit block scaling) runs on Blackwell GPUs");
      } else {
        assertThat(r.status()).as(q.toString()).isEqualTo(PointStatus.OK);
      }
      if (q.gpu().equals("gb200")) {
        gb200.put(q.dtype(), r.iterationSeconds());
      }
    }
    // NVFP4's GEMMs run 1.977 / 1.395 = 1.417x current scaling's: faster, by less than that.
    assertThat(gb200.get("fp8:tensorwise") / gb200.get("fp8:nvfp4")).isGreaterThan(1.0)
        .isLessThan(1.417);
    bad(base.replace("gb200, ", "") + "dtype: [fp8:nvfp4]\n",
        "key 'dtype': no GPU of the grid trains in fp8:nvfp4; the FP8 recipe nvfp4 runs on "
            + "Blackwell GPUs only");
    bad(base + "dtype: [bf16:mxfp8]\n", "field 'dtype[0]': expected auto, bf16, f16, f32, fp8 "
        + "or fp8:RECIPE (RECIPE delayed, tensorwise, mxfp8 or nvfp4), got 'bf16:mxfp8'");
    bad(base + "dtype: [fp8:int4]\n", "field 'dtype[0]'");
  }
}
