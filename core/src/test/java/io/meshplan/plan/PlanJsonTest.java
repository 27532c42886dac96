package io.meshplan.plan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.util.InputException;
import java.util.List;
import org.junit.jupiter.api.Test;

class PlanJsonTest {
  static PipelinePlan twoStages() {
    var model = Presets.get("llama2-7b");
    var t = List.of(new TensorSharding("attention.wq", "bf16[4096,4096]",
        "{devices=[1,4,2]<=[8] last_tile_dim_replicate}", "column-parallel over 4 GPUs"));
    return new PipelinePlan(model, "2x8:h100-80gb:ib-ndr400", 64, 2, 32, 1, List.of(
            new StagePlan(0, 15, 1, 8, 0, 2, 4, Recompute.SELECTIVE, true, 1, true, 0.01, 0.02, 3.0e10, t),
            new StagePlan(16, 31, 1, 8, 8, 2, 4, Recompute.SELECTIVE, true, 1, true, 0.01, 0.02, 2.5e10,
                t)),
        new PipelinePlan.Prediction(1.5, 87381.3, 400.0, 0.4, 3.0e10));
  }

  @Test
  void roundTrips() {
    PipelinePlan p = twoStages();
    String text = PlanJson.write(p);
    assertThat(text).contains("\"logicalMesh\" : [ 2, 4 ]", "\"layers\" : [ 16, 31 ]",
        "\"microbatches\" : 32", "\"mfu\" : 0.4", "\"microBatch\" : 1");
    PipelinePlan back = PlanJson.read("p.json", text);
    assertThat(PlanJson.write(back)).isEqualTo(text);
    // 2 stages of 16 layers, both 2x4: tp 4, pp 2, dp 2; 64 = 32 microbatches of 2 sequences,
    // one per replica.
    assertThat(back.asParallelConfig()).contains(new ParallelConfig(4, 2, 2, 1, 1, 64,
        Recompute.SELECTIVE, true, true));
  }

  @Test
  void unevenFirstAndLastStagesRoundTripAsMegatronCoresCounts() {
    // llama2-7b's 32 layers on 4 stages as 7, 9, 9, 7: (32 - 7 - 7) / 2 = 9 in the middle.
    PipelinePlan even = twoStages();
    StagePlan s = even.stages().get(0);
    int[][] ranges = {{0, 6}, {7, 15}, {16, 24}, {25, 31}};
    List<StagePlan> stages = new java.util.ArrayList<>();
    for (int i = 0; i < ranges.length; i++) {
      stages.add(new StagePlan(ranges[i][0], ranges[i][1], 1, 8, 8 * i, 2, 4, s.recompute(),
          true, 1, true, 0.01, 0.02, 3.0e10, s.tensors()));
    }
    PipelinePlan p = new PipelinePlan(even.model(), "4x8:h100-80gb:ib-ndr400", 64, 2, 32, 1,
        stages, even.prediction());
    String text = PlanJson.write(p);
    assertThat(text).contains("\"layers\" : [ 0, 6 ]", "\"layers\" : [ 25, 31 ]");
    PipelinePlan back = PlanJson.read("p.json", text);
    assertThat(PlanJson.write(back)).isEqualTo(text);
    assertThat(back.whyNotUniform()).isEmpty();
    assertThat(back.asParallelConfig()).contains(new ParallelConfig(4, 4, 2, 1, 1, 64,
        Recompute.SELECTIVE, true, 1, 7, 7));
    // 7, 9, 8, 8 is no first/last split (the middle stages differ): Megatron-Core's layout
    // states it chunk by chunk.
    stages.set(2, new StagePlan(16, 23, 1, 8, 16, 2, 4, s.recompute(), true, 1, true, 0.01, 0.02,
        3.0e10, s.tensors()));
    stages.set(3, new StagePlan(24, 31, 1, 8, 24, 2, 4, s.recompute(), true, 1, true, 0.01, 0.02,
        3.0e10, s.tensors()));
    PipelinePlan odd = new PipelinePlan(even.model(), "4x8:h100-80gb:ib-ndr400", 64, 2, 32, 1,
        stages, even.prediction());
    assertThat(odd.whyNotUniform()).isEmpty();
    assertThat(odd.asParallelConfig().orElseThrow().split()).isEqualTo(PipelineLayout.parse(
        "E" + "t".repeat(7) + "|" + "t".repeat(9) + "|" + "t".repeat(8) + "|" + "t".repeat(8)
            + "L", 4));
  }

  @Test
  void aStageRecomputingWhereTheOthersDoNotIsNamedAsADifferentSetting() {
    // Stages 0 and 1 recompute nothing, stage 2 its first block in full: the plan-wide count
    // (1) is no reason for stage 1 to differ; the modes differ, which is what the reason says.
    // Before, the count was compared first, and stage 1 was said to recompute "0 and 0".
    PipelinePlan two = twoStages();
    StagePlan s = two.stages().get(0);
    int[][] ranges = {{0, 9}, {10, 19}, {20, 31}};
    List<StagePlan> stages = new java.util.ArrayList<>();
    for (int i = 0; i < ranges.length; i++) {
      Recompute r = i == 2 ? Recompute.FULL : Recompute.NONE;
      stages.add(new StagePlan(ranges[i][0], ranges[i][1], 1, 8, 8 * i, 2, 4, r, true, 1, true,
          0.01, 0.02, 3.0e10, s.tensors(), java.util.Optional.empty(), 1, 1, 1,
          ContextExchange.P2P, 0, i == 2 ? 1 : 0));
    }
    PipelinePlan p = new PipelinePlan(two.model(), "3x8:h100-80gb:ib-ndr400", 64, 2, 32, 1,
        stages, two.prediction());
    assertThat(p.whyNotUniform()).hasValueSatisfying(w -> assertThat(w)
        .startsWith("stages use different recomputation"));
    // All three recompute in full, but only stage 2 its first block: Megatron-LM's
    // --recompute-num-layers 1 recomputes the first block of every stage.
    for (int i = 0; i < 2; i++) {
      StagePlan t = stages.get(i);
      stages.set(i, new StagePlan(t.firstLayer(), t.lastLayer(), 1, 8, 8 * i, 2, 4,
          Recompute.FULL, true, 1, true, 0.01, 0.02, 3.0e10, s.tensors(),
          java.util.Optional.empty(), 1, 1, 1, ContextExchange.P2P, 0, 0));
    }
    PipelinePlan q = new PipelinePlan(two.model(), "3x8:h100-80gb:ib-ndr400", 64, 2, 32, 1,
        stages, two.prediction());
    assertThat(q.whyNotUniform()).contains("stage 0 recomputes all of its 10 blocks, where "
        + "Megatron-LM's --recompute-num-layers 1 recomputes the first 1 in every stage");
  }

  @Test
  void communicationBytesAreOptionalAndRoundTrip() {
    PipelinePlan old = twoStages();
    // A version-1 file without the fields (as meshplan wrote before counting bytes) still reads.
    String v1 = PlanJson.write(old);
    assertThat(v1).doesNotContain("communicationBytes");
    assertThat(PlanJson.read("old.json", v1).prediction().commBytes()).isEmpty();
    List<StagePlan> stages = new java.util.ArrayList<>();
    for (StagePlan s : old.stages()) {
      stages.add(new StagePlan(s.firstLayer(), s.lastLayer(), s.submeshNodes(), s.submeshGpus(),
          s.firstDevice(), s.dataParallel(), s.tensorParallel(), s.recompute(),
          s.sequenceParallel(), s.zeroStage(), s.megatronLayouts(), s.forwardSeconds(),
          s.backwardSeconds(), s.peakMemoryBytes(), s.tensors(),
          java.util.Optional.of(new AxisBytes(4e9, 1e9, 2e8))));
    }
    PipelinePlan.Prediction p = old.prediction();
    PipelinePlan plan = new PipelinePlan(old.model(), old.cluster(), old.globalBatchSize(),
        old.microbatchSequences(), old.microbatches(), 1, stages,
        new PipelinePlan.Prediction(p.iterationSeconds(), p.tokensPerSecond(), p.tflopsPerGpu(),
            p.mfu(), p.peakMemoryBytesPerGpu(),
            java.util.Optional.of(new AxisBytes(16 * 4e9, 16 * 1e9, 16 * 2e8))));
    String text = PlanJson.write(plan);
    // 16 GPUs: the mean per GPU is the total over 16.
    assertThat(text).contains("\"communicationBytesPerGpu\" : {\n    \"tensorParallel\" : 4.0E9");
    PipelinePlan back = PlanJson.read("p.json", text);
    assertThat(PlanJson.write(back)).isEqualTo(text);
    assertThat(back.stages().get(1).commBytesPerGpu()).contains(new AxisBytes(4e9, 1e9, 2e8));
    assertThat(back.commBytesPerGpu()).contains(new AxisBytes(4e9, 1e9, 2e8));
    assertThatThrownBy(() -> PlanJson.read("p.json", text.replaceFirst("\"pipeline\" : 3.2E9",
        "\"pipeline\" : -1"))).isInstanceOf(InputException.class)
        .hasMessageContaining("communicationBytes").hasMessageContaining("pipeline bytes");
    // The expert and context exchanges are their own fields; a file written before they were
    // counted apart has neither and reads them as 0; a negative one is refused.
    assertThat(text).contains("\"expertParallel\" : 0.0,\n    \"contextParallel\" : 0.0");
    String older = text.replaceAll(
        ",\n *\"expertParallel\" : 0.0,\n *\"contextParallel\" : 0.0", "");
    assertThat(older).doesNotContain("expertParallel");
    assertThat(PlanJson.read("older.json", older).commBytesPerGpu())
        .contains(new AxisBytes(4e9, 1e9, 2e8, 0, 0));
    assertThatThrownBy(() -> PlanJson.read("p.json", text.replaceFirst(
        "\"expertParallel\" : 0.0", "\"expertParallel\" : -5"))).isInstanceOf(
        InputException.class).hasMessageContaining("expert-parallel bytes");
    // An integer field past 32 bits is named as such, not as "not an integer".
    assertThatThrownBy(() -> PlanJson.read("p.json", text.replaceFirst(
        "\"microbatchSequences\" : \\d+", "\"microbatchSequences\" : 1099511627776")))
        .isInstanceOf(InputException.class).hasMessageContaining(
            "microbatchSequences: must be a 32-bit integer, got 1099511627776");
    // The top-level mean per GPU is derived again on reading, but a bad one is still refused.
    String perGpu = "\"communicationBytesPerGpu\" : {\n    \"tensorParallel\" : 4.0E9";
    assertThatThrownBy(() -> PlanJson.read("p.json", text.replace(perGpu,
        "\"communicationBytesPerGpu\" : {\n    \"tensorParallel\" : -4.0E9")))
        .isInstanceOf(InputException.class).hasMessageContaining("communicationBytesPerGpu")
        .hasMessageContaining("tensor-parallel bytes");
    assertThatThrownBy(() -> PlanJson.read("p.json", text.replace(perGpu,
        "\"communicationBytesPerGpu\" : {\n    \"tensorParallel\" : \"x\""))).isInstanceOf(
        InputException.class).hasMessageContaining("communicationBytesPerGpu");
  }

  /**
   * Two stages of 8 GPUs, each running 2 chunks of 8 layers (chunk k on stage k mod 2): the GPUs
   * are counted once per stage (16, not 32), the JSON names each chunk's stage and chunk, reads
   * back unchanged, and a file whose chunk sits on other devices than its stage, or whose
   * microbatches are not a multiple of the depth, is refused with one line naming the rule.
   */
  @Test
  void interleavedPlansKeepEachChunkOnItsStagesDevices() {
    var model = Presets.get("llama2-7b");
    List<StagePlan> chunks = new java.util.ArrayList<>();
    for (int k = 0; k < 4; k++) {
      chunks.add(new StagePlan(8 * k, 8 * k + 7, 1, 8, 8 * (k % 2), 2, 4, Recompute.NONE, false,
          1, true, 0.005, 0.01, 3.0e10, List.of()));
    }
    PipelinePlan p = new PipelinePlan(model, "2x8:h100-80gb:ib-ndr400", 64, 2, 32, 2, chunks,
        new PipelinePlan.Prediction(1.2, 1e5, 400.0, 0.4, 3.0e10));
    assertThat(p.gpus()).isEqualTo(16);
    assertThat(p.pipelineStages()).isEqualTo(2);
    assertThat(p.layersOf(1)).isEqualTo("8-15,24-31");
    assertThat(p.chunksOf(0)).containsExactly(chunks.get(0), chunks.get(2));
    String text = PlanJson.write(p);
    assertThat(text).contains("\"schedule\" : \"interleaved-1f1b\"", "\"virtualStages\" : 2",
        "\"stage\" : 1,\n    \"chunk\" : 1,\n    \"layers\" : [ 24, 31 ]");
    assertThat(PlanJson.write(PlanJson.read("p.json", text))).isEqualTo(text);
    // Chunk 3 moved to stage 0's devices (8 -> 0).
    String moved = text.replace("\"layers\" : [ 24, 31 ],\n    \"submesh\" : [ 1, 8 ],\n"
        + "    \"firstDevice\" : 8", "\"layers\" : [ 24, 31 ],\n    \"submesh\" : [ 1, 8 ],\n"
        + "    \"firstDevice\" : 0");
    assertThat(moved).isNotEqualTo(text);
    assertThatThrownBy(() -> PlanJson.read("p.json", moved)).isInstanceOf(InputException.class)
        .hasMessage("p.json: stages[3].firstDevice: model chunk 3 must run on the devices and"
            + " logical mesh of stages[1] (8), got 0");
    // 33 microbatches of 2 sequences: not a multiple of the 2 stages.
    String odd = text.replace("\"globalBatch\" : 64", "\"globalBatch\" : 66")
        .replace("\"microbatches\" : 32", "\"microbatches\" : 33");
    assertThatThrownBy(() -> PlanJson.read("p.json", odd)).isInstanceOf(InputException.class)
        .hasMessageContaining("multiple of the pipeline depth (2)");
  }

  @Test
  void badFilesNameTheField() {
    String text = PlanJson.write(twoStages());
    assertThatThrownBy(() -> PlanJson.read("p.json", "{"))
        .isInstanceOf(InputException.class).hasMessageStartingWith("p.json: not a JSON plan");
    assertThatThrownBy(() -> PlanJson.read("p.json", text.replace("\"version\" : 1",
        "\"version\" : 7"))).hasMessageContaining("version 7 is not supported");
    assertThatThrownBy(() -> PlanJson.read("p.json", text.replace("\"microbatches\" : 32,", "")))
        .hasMessage("p.json: microbatches: the field is missing");
    assertThatThrownBy(() -> PlanJson.read("p.json", text.replace("\"layers\" : [ 16, 31 ]",
        "\"layers\" : [ 17, 31 ]"))).hasMessageContaining("p.json: stages[1].layers: [17, 31] must"
        + " start at layer 16");
  }

  @Test
  void megatronChecksNameTheFlag() {
    var c = new ParallelConfig(8, 4, 2, 1, 1, 64, Recompute.NONE, false, false);
    assertThatThrownBy(() -> c.check(128, 32, 32, 32)).hasMessageContaining("= 64 GPUs");
    var odd = new ParallelConfig(8, 4, 2, 1, 3, 64, Recompute.NONE, false, false);
    assertThatThrownBy(() -> odd.check(64, 32, 32, 32)).hasMessageContaining("global batch 64");
    var layers = new ParallelConfig(8, 3, 2, 1, 1, 48, Recompute.NONE, false, false);
    assertThatThrownBy(() -> layers.check(48, 32, 32, 32)).hasMessageContaining("32 layers");
  }

  static PipelinePlan moduleOnTwoStages() {
    var t = List.of(new TensorSharding("params['head']", "bf16[1024,32000]",
        "{devices=[1,2]<=[2]}", "split dim 1 over the data-parallel axis (2 GPUs)"));
    PlanSource.HloModule m = new PlanSource.HloModule("jit_train_step", "step.hlo",
        "ab".repeat(32), List.of("train_step/layers[0]", "train_step/layers[1]",
            "train_step/layers[2]"));
    // One call of the module per microbatch: 8 microbatches, "global batch" 8, a microbatch
    // of 1 that no data-parallel degree has to divide.
    return new PipelinePlan(m, "1x4:a100-80gb:ib-hdr200", 8, 1, 8, 1, List.of(
        new StagePlan(0, 1, 1, 2, 0, 2, 1, Recompute.NONE, false, 0, false, 0.0068, 0.0071,
            7.0e9, t),
        new StagePlan(2, 2, 1, 2, 2, 2, 1, Recompute.NONE, false, 0, false, 0.0080, 0.0087,
            3.8e9, t)), new PipelinePlan.Prediction(0.15, 53.35, 59.97, 0.192, 7.0e9));
  }

  @Test
  void aModulesPlanRoundTripsWithItsSource() {
    PipelinePlan p = moduleOnTwoStages();
    String text = PlanJson.write(p);
    assertThat(text).contains("\"kind\" : \"hlo\"", "\"sha256\" : \"abab",
        "\"tokensPerSecond\" : null", "\"microbatchesPerSecond\" : 53.35")
        .doesNotContain("\"model\"", "\"recompute\"", "\"microBatch\"");
    PipelinePlan back = PlanJson.read("p.json", text);
    assertThat(back).isEqualTo(p);
    assertThat(PlanJson.write(back)).isEqualTo(text);
    assertThat(back.whyNotUniform()).hasValueSatisfying(w ->
        assertThat(w).contains("no framework model exists for an XLA module"));
    assertThatThrownBy(back::model).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void aModulesPlanWithBadSourceFieldsNamesThem() {
    String text = PlanJson.write(moduleOnTwoStages());
    assertThatThrownBy(() -> PlanJson.read("p.json", text.replace("\"hlo\"", "\"onnx\"")))
        .isInstanceOf(InputException.class).hasMessageContaining("source.kind");
    assertThatThrownBy(() -> PlanJson.read("p.json", text.replace("abab", "ABAB")))
        .isInstanceOf(InputException.class).hasMessageContaining("SHA-256");
    assertThatThrownBy(() -> PlanJson.read("p.json", text.replace("\"train_step/layers[2]\"",
        "3"))).isInstanceOf(InputException.class).hasMessageContaining("layerNames");
    // Three layers named, but stages that cover two.
    assertThatThrownBy(() -> PlanJson.read("p.json", text.replace("\"layers\" : [ 2, 2 ]",
        "\"layers\" : [ 2, 1 ]"))).isInstanceOf(InputException.class);
  }

  /**
   * A mixture-of-experts model's experts and attention sinks are written into its architecture
   * and read back; a dense model's plan has neither field, and a plan without them (every plan
   * written before experts) reads as a dense model.
   */
  @Test
  void expertsAndSinksRoundTripAndOldPlansAreDense() throws java.io.IOException {
    PipelinePlan dense = twoStages();
    var t = dense.stages().get(0).tensors();
    PipelinePlan moe = new PipelinePlan(Presets.get("gpt-oss-20b"), "2x8:h100-80gb:ib-ndr400",
        64, 2, 32, 1, List.of(
            new StagePlan(0, 11, 1, 8, 0, 2, 4, Recompute.SELECTIVE, true, 1, true, 0.01, 0.02,
                3.0e10, t),
            new StagePlan(12, 23, 1, 8, 8, 2, 4, Recompute.SELECTIVE, true, 1, true, 0.01, 0.02,
                2.5e10, t)),
        dense.prediction());
    String text = PlanJson.write(moe);
    assertThat(text).contains("\"moe\" : {", "\"experts\" : 32", "\"expertsPerToken\" : 4",
        "\"expertFfn\" : 2880", "\"sharedExpertFfn\" : 0", "\"expertBiases\" : true",
        "\"sinks\" : true", "\"parameters\" : 20914757184");
    PipelinePlan back = PlanJson.read("p.json", text);
    assertThat(back.model().arch()).isEqualTo(Presets.get("gpt-oss-20b").arch());
    assertThat(back.model().parameterCount()).isEqualTo(20_914_757_184L);
    assertThat(PlanJson.write(back)).isEqualTo(text);
    assertThat(PlanJson.write(dense)).doesNotContain("\"moe\"", "\"sinks\"", "experts");
    String old = java.nio.file.Files.readString(java.nio.file.Path.of(
        "core/src/test/resources/plans/llama2-70b-128x8-h100-80gb-ib-ndr400.json"));
    assertThat(old).doesNotContain("\"moe\"");
    assertThat(PlanJson.read("old.json", old).model().arch().moe())
        .isEqualTo(io.meshplan.model.MoeShape.DENSE);
    assertThatThrownBy(() -> PlanJson.read("p.json", text.replace("\"expertsPerToken\" : 4",
        "\"expertsPerToken\" : 40"))).isInstanceOf(InputException.class)
        .hasMessage("p.json: field 'model': experts per token must be between 1 and the 32 "
            + "experts, got 40");
    assertThatThrownBy(() -> PlanJson.read("p.json", text.replace("\"expertFfn\" : 2880,", "")))
        .isInstanceOf(InputException.class)
        .hasMessage("p.json: model: architecture: moe: field 'expertFfn' is missing");
  }
}
