package io.meshplan.export;

import static java.util.Map.entry;
import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Megatron-LM export against Megatron-LM's own rules, restated here (NVIDIA/Megatron-LM main at
 * d98e8a6; the sources are not read at test time). Each exported file is run under bash with a
 * stand-in {@code torchrun} that records its arguments, so the check covers what the launcher
 * really passes.
 *
 * <ul>
 *   <li>Every option is one Megatron-LM defines ({@link #DEFINED}, with where).
 *   <li>World size = nodes x GPUs per node = tensor x pipeline x data: Megatron-LM sets {@code
 *       data_parallel_size = world_size // (tensor * pipeline * context)} ({@code
 *       megatron/training/arguments.py:442-448}).
 *   <li>global batch = micro batch x data x accumulation steps, the division asserted exact in
 *       {@code megatron/core/num_microbatches_calculator.py:381}.
 *   <li>{@code CUDA_DEVICE_MAX_CONNECTIONS=1} exactly when {@code arguments.py:1453-1479} asserts
 *       it, unset under Megatron-FSDP ({@code arguments.py:1166}).
 * </ul>
 */
class MegatronConformanceTest {
  /**
   * The options the export writes and where Megatron-LM defines them. Options from dataclass
   * fields get their names from {@code ArgumentGroupFactory} ({@code
   * megatron/training/argument_utils.py:106}: {@code "--" + name.replace("_", "-")}).
   */
  static final Map<String, String> DEFINED = Map.ofEntries(
      entry("--tensor-model-parallel-size", "megatron/core/model_parallel_config.py:55"),
      entry("--pipeline-model-parallel-size", "megatron/core/model_parallel_config.py:83"),
      entry("--sequence-parallel", "megatron/core/model_parallel_config.py:94"),
      entry("--tp-comm-overlap", "megatron/core/model_parallel_config.py:265"),
      entry("--fp16", "megatron/core/model_parallel_config.py:177"),
      entry("--bf16", "megatron/core/model_parallel_config.py:180"),
      entry("--num-layers-per-virtual-pipeline-stage", "megatron/training/arguments.py:3114"),
      entry("--num-virtual-stages-per-pipeline-rank", "megatron/training/arguments.py:3116"),
      entry("--decoder-first-pipeline-num-layers", "megatron/training/arguments.py:3095"),
      entry("--decoder-last-pipeline-num-layers", "megatron/training/arguments.py:3099"),
      entry("--micro-batch-size", "megatron/training/config/training_config.py:11"),
      entry("--global-batch-size", "megatron/training/config/training_config.py:15"),
      entry("--train-iters", "megatron/training/config/training_config.py:64"),
      entry("--recompute-granularity", "megatron/core/transformer/transformer_config.py:532"),
      entry("--recompute-method", "megatron/core/transformer/transformer_config.py:543"),
      entry("--recompute-num-layers", "megatron/core/transformer/transformer_config.py:551"),
      entry("--overlap-grad-reduce", "megatron/training/arguments.py:3121"),
      entry("--overlap-param-gather", "megatron/training/arguments.py:3148"),
      entry("--no-gradient-accumulation-fusion", "megatron/training/arguments.py:2944"),
      entry("--grad-reduce-in-bf16", "megatron/training/arguments.py:3053"),
      entry("--use-distributed-optimizer", "megatron/training/arguments.py:3156"),
      entry("--use-megatron-fsdp", "megatron/training/config/common_config.py:92"),
      entry("--data-parallel-sharding-strategy", "megatron/training/arguments.py:3190"),
      entry("--ckpt-format", "megatron/training/config/training_config.py:486"),
      entry("--init-model-with-meta-device", "megatron/core/transformer/transformer_config.py:419"),
      entry("--num-layers", "megatron/core/transformer/transformer_config.py:65"),
      entry("--hidden-size", "megatron/core/transformer/transformer_config.py:145"),
      entry("--num-attention-heads", "megatron/core/transformer/transformer_config.py:148"),
      entry("--num-query-groups", "megatron/core/transformer/transformer_config.py:175"),
      entry("--ffn-hidden-size", "megatron/core/transformer/transformer_config.py:180"),
      entry("--hidden-dropout", "megatron/core/transformer/transformer_config.py:188"),
      entry("--attention-dropout", "megatron/core/transformer/transformer_config.py:191"),
      entry("--disable-bias-linear", "megatron/core/transformer/transformer_config.py:213"),
      entry("--normalization", "megatron/core/transformer/transformer_config.py:256"),
      entry("--attention-backend", "megatron/core/transformer/transformer_config.py:151"),
      entry("--transformer-impl", "megatron/core/transformer/transformer_config.py:1314"),
      entry("--fp8-format", "megatron/core/transformer/transformer_config.py:587-588"),
      entry("--fp8-recipe", "megatron/core/transformer/transformer_config.py:594"),
      entry("--fp4-format", "megatron/core/transformer/transformer_config.py:673-674"),
      entry("--fp4-recipe", "megatron/core/transformer/transformer_config.py:679"),
      entry("--fp8-param-gather", "megatron/training/arguments.py:2016"),
      entry("--fp8-amax-history-len", "megatron/core/transformer/transformer_config.py:621"),
      entry("--fp8-amax-compute-algo", "megatron/core/transformer/transformer_config.py:624"),
      entry("--group-query-attention", "megatron/training/arguments.py:2382"),
      entry("--max-position-embeddings", "megatron/training/arguments.py:2394"),
      entry("--position-embedding-type", "megatron/training/arguments.py:2397"),
      entry("--swiglu", "megatron/training/arguments.py:2450"),
      entry("--untie-embeddings-and-output-weights", "megatron/training/arguments.py:2460"),
      entry("--seq-length", "megatron/training/arguments.py:3305"),
      entry("--reset-position-ids", "megatron/training/arguments.py:3321"),
      entry("--dataloader-inter-document-masking", "megatron/training/arguments.py:3326"),
      entry("--data-path", "megatron/training/arguments.py:3255"),
      entry("--lr", "megatron/training/arguments.py:2984"),
      entry("--tokenizer-type", "megatron/training/config/training_config.py:698"),
      entry("--tokenizer-model", "megatron/training/config/training_config.py:714"),
      entry("--save", "megatron/training/config/training_config.py:395"),
      entry("--save-interval", "megatron/training/config/training_config.py:398"),
      entry("--load", "megatron/training/config/training_config.py:430"),
      // The model fields of MegatronModelArgs.
      entry("--norm-epsilon", "megatron/core/transformer/transformer_config.py:201-203"),
      entry("--add-qkv-bias", "megatron/core/transformer/transformer_config.py:218"),
      entry("--window-size", "megatron/training/arguments.py:2384"),
      entry("--window-attn-skip-freq", "megatron/training/arguments.py:2387"),
      entry("--yarn-original-max-position-embeddings", "megatron/training/arguments.py:2400"),
      entry("--yarn-beta-fast", "megatron/training/arguments.py:2402"),
      entry("--yarn-beta-slow", "megatron/training/arguments.py:2404"),
      entry("--no-yarn-correction-range-round-to-int", "megatron/training/arguments.py:2408"),
      entry("--rotary-base", "megatron/training/arguments.py:2418"),
      entry("--rotary-percent", "megatron/training/arguments.py:2420"),
      entry("--use-rope-scaling", "megatron/training/arguments.py:2424"),
      entry("--rotary-scaling-factor", "megatron/training/arguments.py:3558"),
      entry("--mscale", "megatron/training/arguments.py:3560"),
      entry("--mscale-all-dim", "megatron/training/arguments.py:3562"),
      entry("--padded-vocab-size", "megatron/training/config/training_config.py:682"),
      entry("--overlap-moe-expert-parallel-comm", "megatron/core/model_parallel_config.py:343"));

  @TempDir Path dir;

  private static List<ExportInput> inputs() {
    ClusterSpec v100 = ClusterSpec.parse("50x4:v100-32gb:ib-edr100");
    return List.of(
        Plans.input(1, Recompute.SELECTIVE, true, true),
        Plans.input(2, Recompute.FULL, false, false),
        Plans.input(1, Recompute.FULL, true, 2),
        new ExportInput(Plans.LLAMA70B, Plans.CLUSTER,
            new ParallelConfig(8, 1, 128, 1, 1, 1024, Recompute.FULL, true, 3)),
        new ExportInput(Plans.LLAMA70B, Plans.CLUSTER,
            new ParallelConfig(8, 4, 32, 1, 1, 1024, Recompute.FULL, true, 1, 19, 19)),
        // Gradients reduced in bf16, as Megatron-Bridge's performance recipes run.
        new ExportInput(Plans.LLAMA70B, Plans.CLUSTER,
            new ParallelConfig(8, 4, 32, 1, 1, 1024, Recompute.SELECTIVE, true, 1),
            io.meshplan.model.Attention.FLASH,
            io.meshplan.model.Overlaps.DEFAULTS.withGradReduce(true).withBf16GradReduce(true),
            false),
        // 13B on 50 x 4 V100 (fp16, unfused attention): 4 x 5 x 10 = 200 GPUs.
        new ExportInput(Presets.get("llama2-13b").withTraining(1, io.meshplan.graph.DType.F16),
            v100, new ParallelConfig(4, 5, 10, 1, 1, 1000, Recompute.FULL, false, 0)),
        // AMD MI300X (ROCm): 2 x 8 GPUs, bf16, unfused attention (no fused kernel priced).
        new ExportInput(Presets.get("llama3-8b"), ClusterSpec.parse("2x8:mi300x"),
            new ParallelConfig(8, 1, 2, 1, 4, 1024, Recompute.NONE, true, 0),
            io.meshplan.model.Attention.UNFUSED, io.meshplan.model.Overlaps.DEFAULTS, false),
        // Packed documents of 1,024 tokens: masked per document by the dataloader's cu_seqlens.
        new ExportInput(Plans.LLAMA70B.withPacking(io.meshplan.model.Packing.meanLength(1024)),
            Plans.CLUSTER, new ParallelConfig(8, 4, 32, 1, 1, 1024, Recompute.FULL, true, 1)),
        // NVFP4 on 8 GB200s: Megatron-LM's FP4 mode, --fp4-format and --fp4-recipe.
        new ExportInput(Presets.get("llama3-8b").withTraining(128,
            io.meshplan.graph.DType.F8E4M3FN).withFp8Scaling(io.meshplan.model.Fp8Scaling.NVFP4),
            ClusterSpec.parse("1xnvl8:gb200"),
            new ParallelConfig(1, 1, 8, 1, 1, 128, Recompute.NONE, false, 1)),
        // FP8 weights (--fp8-param-gather) under per-tensor current scaling, with the
        // distributed optimizer that validate_args requires beside them.
        new ExportInput(Presets.get("llama3-8b").withTraining(128,
            io.meshplan.graph.DType.F8E4M3FN).withFp8Scaling(io.meshplan.model.Fp8Scaling.TENSORWISE)
            .withLora(io.meshplan.model.Lora.NONE.withBase(io.meshplan.model.Lora.Base.FP8)),
            ClusterSpec.parse("1xnvl72:gb200"),
            new ParallelConfig(1, 1, 72, 1, 1, 72, Recompute.NONE, false, 1)),
        // Full recomputation of the first 5 layers of each of the 4 stages' 20.
        new ExportInput(Plans.LLAMA70B, Plans.CLUSTER,
            new ParallelConfig(8, 4, 32, 1, 1, 1024, Recompute.FULL, true, 1)
                .withRecomputeLayers(5)));
  }

  /**
   * Recomputation as Megatron-Core's {@code TransformerConfig.__post_init__} requires it
   * (d98e8a6, {@code megatron/core/transformer/transformer_config.py:1908-1932}): full
   * granularity names a method, {@code block} or {@code uniform}, and a layer count; selective
   * granularity neither. Under {@code block}, {@code megatron/core/recompute.py:167-181}
   * checkpoints the first {@code recompute_num_layers} layers of each pipeline rank's chunk, the
   * count the plan priced; under {@code uniform} with 1, every layer.
   */
  @Test
  void recomputationNamesItsMethodAndLayersAsTransformerConfigRequires() throws Exception {
    boolean block = false;
    for (ExportInput in : inputs()) {
      ParallelConfig c = in.config();
      List<String> w = launched(new MegatronArgs().write(in));
      if (c.recompute() == Recompute.FULL) {
        assertThat(value(w, "--recompute-granularity")).isEqualTo("full");
        String method = value(w, "--recompute-method");
        assertThat(method).isIn("block", "uniform");
        assertThat(Integer.parseInt(value(w, "--recompute-num-layers")))
            .isEqualTo(c.recomputeLayers() > 0 ? c.recomputeLayers() : 1);
        assertThat(method).isEqualTo(c.recomputeLayers() > 0 ? "block" : "uniform");
        block |= method.equals("block");
      } else {
        assertThat(w).doesNotContain("--recompute-method", "--recompute-num-layers");
      }
    }
    assertThat(block).isTrue();
  }

  /** Runs the file as a user would, with every variable set, and returns torchrun's words. */
  private List<String> launched(String text) throws Exception {
    return launched(dir, text, "meta-llama/Llama-2-70b-hf");
  }

  /**
   * Runs a Megatron-LM launch file under bash in {@code dir} with a stand-in {@code torchrun} that
   * prints its arguments, every variable the file reads set ({@code TOKENIZER_MODEL} to {@code
   * tokenizer}), and returns torchrun's words; the file must exit 0.
   */
  static List<String> launched(Path dir, String text, String tokenizer) throws Exception {
    Path bin = Files.createDirectories(dir.resolve("bin"));
    Path torchrun = bin.resolve("torchrun");
    Files.writeString(torchrun, "#!/bin/sh\nprintf '%s\\n' \"$@\"\n");
    assertThat(torchrun.toFile().setExecutable(true)).isTrue();
    Path f = dir.resolve("megatron.sh");
    Files.writeString(f, text);
    ProcessBuilder pb = new ProcessBuilder("bash", f.toString()).redirectErrorStream(true);
    Map<String, String> env = pb.environment();
    env.put("PATH", bin + ":" + env.get("PATH"));
    env.putAll(Map.of("MEGATRON_LM", "/opt/Megatron-LM", "MASTER_ADDR", "10.0.0.1",
        "NODE_RANK", "0", "TOKENIZER_MODEL", tokenizer, "DATA_PATH",
        "/data/corpus_text_document", "LR", "3e-4", "TRAIN_ITERS", "1000", "CHECKPOINT_DIR",
        "/ckpt", "SAVE_INTERVAL", "100"));
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as(out).isZero();
    return new ArrayList<>(out.lines().toList());
  }

  private static String value(List<String> words, String flag) {
    return words.get(words.indexOf(flag) + 1);
  }

  @Test
  void everyExportLaunchesTheWorldSizeWithDefinedFlagsAndExactBatches() throws Exception {
    for (ExportInput in : inputs()) {
      ParallelConfig c = in.config();
      String text = new MegatronArgs().write(in);
      List<String> w = launched(text);
      int nnodes = Integer.parseInt(value(w, "--nnodes"));
      int nproc = Integer.parseInt(value(w, "--nproc-per-node"));
      assertThat(nnodes * nproc).isEqualTo(c.tensorParallel() * c.pipelineParallel()
          * c.dataParallel());
      List<String> megatron = w.subList(w.indexOf("/opt/Megatron-LM/pretrain_gpt.py") + 1,
          w.size());
      megatron.stream().filter(s -> s.startsWith("--"))
          .forEach(s -> assertThat(DEFINED).as(in.config().toString()).containsKey(s));
      assertThat(megatron).contains("--data-path", "--lr", "--train-iters", "--save",
          "--load", "--save-interval", "--tokenizer-model");
      int micro = Integer.parseInt(value(megatron, "--micro-batch-size"));
      int global = Integer.parseInt(value(megatron, "--global-batch-size"));
      int dp = nnodes * nproc / (Integer.parseInt(value(megatron, "--tensor-model-parallel-size"))
          * Integer.parseInt(value(megatron, "--pipeline-model-parallel-size")));
      assertThat(global % (micro * dp)).isZero();
      assertThat(global / (micro * dp)).isEqualTo(c.microbatches());
      boolean one = c.tensorParallel() > 1 && c.zeroStage() < 2
          && in.cluster().gpu().architecture().computeCapabilityMajor() < 10;
      assertThat(text.contains("\nexport CUDA_DEVICE_MAX_CONNECTIONS=1\n")).isEqualTo(one);
      assertThat(text.contains("\nunset CUDA_DEVICE_MAX_CONNECTIONS\n"))
          .isEqualTo(c.zeroStage() >= 2);
      // Packed documents: per-document attention by the dataloader's cu_seqlens (arguments.py:
      // 3326), which pretrain_gpt.py hands the attention kernel as PackedSeqParams; positions
      // restart at each document (3321). Neither without packing.
      boolean packed = in.model().packing().packed();
      assertThat(megatron.contains("--dataloader-inter-document-masking")).isEqualTo(packed);
      assertThat(megatron.contains("--reset-position-ids")).isEqualTo(packed);
      // FP8 weights: --fp8-param-gather exactly when the model keeps them, and then with the
      // distributed optimizer (arguments.py:1095-1097: "--fp8-param-gather only supported with
      // distributed optimizer, torch fsdp2, megatron fsdp, or inference mode").
      boolean fp8Weights = in.model().lora().fp8Weights();
      assertThat(megatron.contains("--fp8-param-gather")).isEqualTo(fp8Weights);
      if (fp8Weights) {
        assertThat(megatron.contains("--use-distributed-optimizer")
            || megatron.contains("--use-megatron-fsdp")).isTrue();
      }
      // LLaMA trains without dropout; Megatron-LM's defaults are 0.1 (transformer_config.py:188).
      assertThat(String.join(" ", megatron)).contains("--attention-dropout 0 --hidden-dropout 0");
    }
  }

  @Test
  void anUnsetVariableIsRefusedWithOneLine() throws Exception {
    Path f = dir.resolve("megatron.sh");
    Files.writeString(f, new MegatronArgs().write(inputs().get(0)));
    ProcessBuilder pb = new ProcessBuilder("bash", f.toString()).redirectErrorStream(true);
    pb.environment().putAll(Map.of("MEGATRON_LM", "/opt/Megatron-LM", "MASTER_ADDR", "h0"));
    pb.environment().remove("NODE_RANK");
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).isNotZero();
    assertThat(out.strip()).doesNotContain("\n")
        .endsWith("NODE_RANK: set NODE_RANK to the index of this node, 0 to 127");
  }
}
