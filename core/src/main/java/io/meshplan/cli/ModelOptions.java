package io.meshplan.cli;

import io.meshplan.graph.DType;
import io.meshplan.model.Fp8Training;
import io.meshplan.model.Architecture;
import io.meshplan.model.HfConfigReader;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.util.InputException;
import io.meshplan.util.Words;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import picocli.CommandLine.Option;

/**
 * The model flags shared by the commands that build a model: a preset or a Hugging Face {@code
 * config.json}, and overrides.
 */
final class ModelOptions {
  /** The families that plan, simulate and export price: transformer decoders. */
  static final Set<ModelSpec.Family> DECODERS =
      Collections.unmodifiableSet(EnumSet.of(ModelSpec.Family.LLAMA, ModelSpec.Family.GPT));

  /** The families whose forward graph shard builds: LLaMA decoders and Alpa's MLP. */
  static final Set<ModelSpec.Family> SHARD_FAMILIES =
      Collections.unmodifiableSet(EnumSet.of(ModelSpec.Family.LLAMA, ModelSpec.Family.ALPA_MLP));

  private final Set<ModelSpec.Family> families;

  @Option(names = "--model", description = "Model preset (one of the model presets listed below) "
      + "or the path of a Hugging Face config.json or its directory, of one of the model_types"
      + " listed below.")
  String model;

  /** The warnings of the last config.json read by {@link #spec()}: fields meshplan ignores. */
  private List<String> configWarnings = List.of();

  /** Why the last config.json's default sequence is below its context, when it is. */
  private java.util.Optional<String> sequenceNote = java.util.Optional.empty();

  @Option(names = "--moe-capacity-factor", paramLabel = "X", description = "Mixture-of-experts"
      + " models: each expert takes at most X times its even share of the tokens and drops the"
      + " rest (Megatron-LM's --moe-expert-capacity-factor), 1/1024 to 1024; default"
      + " dropless.")
  Double capacityFactor;

  @Option(names = "--moe-imbalance", paramLabel = "X", description = "Mixture-of-experts models:"
      + " the busiest GPU's expert tokens over the mean, at least 1 and at most the experts,"
      + " priced at most at the expert-parallel size (default 1: balanced routing, as"
      + " benchmarks that force it measure).")
  Double imbalance;

  @Option(names = "--layers", description = "Override the number of layers.")
  Integer layers;

  /** Shard's {@code --batch}: the forward graph's batch, sequences (see {@link ShardCommand}). */
  Integer batch;

  @Option(names = "--seq", description = "Override the sequence length (tokens).")
  Integer seq;

  @Option(names = "--hidden", description = "Override the hidden size.")
  Integer hidden;

  @Option(names = "--heads", description = "Override the number of attention heads.")
  Integer heads;

  @Option(names = "--kv-heads", description = "Override the number of key/value heads.")
  Integer kvHeads;

  @Option(names = "--ffn", description = "Override the feed-forward size (of each expert in a "
      + "mixture-of-experts model).")
  Integer ffn;

  @Option(names = "--vocab", description = "Override the vocabulary size.")
  Integer vocab;

  @Option(names = "--mean-doc-len", paramLabel = "TOKENS", description = "Documents of TOKENS "
      + "tokens packed into each sequence, each attending only within itself (packed "
      + "fine-tuning; Megatron-LM's --dataloader-inter-document-masking; torchtitan's document "
      + "masking): fused attention computes the documents' squares, not the sequence's.")
  Integer meanDocLen;

  @Option(names = "--packed-seqs", paramLabel = "FILE", description = "As --mean-doc-len, with "
      + "the document lengths of FILE: one length in tokens per line, or a length and a count "
      + "separated by spaces or a comma (# starts a comment).")
  Path packedSeqs;

  @Option(names = "--finetune", paramLabel = "MODE", description = "full (default: every "
      + "weight trained) or lora: the weights frozen, low-rank adapters trained beside the "
      + "projections of --lora-targets (no gradients, fp32 accumulators or Adam state for the "
      + "frozen weights, no weight-gradient GEMMs for them), or qlora: lora on a base whose "
      + "block projections are stored in 4-bit NF4 with double quantization and dequantized "
      + "to bf16 for each GEMM (QLoRA; bf16 only, no tensor parallelism).")
  String finetune;

  @Option(names = "--lora-rank", paramLabel = "R", description = "--finetune lora or "
      + "qlora: the "
      + "adapters' rank, 1 to the hidden size (default 16).")
  Integer loraRank;

  @Option(names = "--lora-alpha", paramLabel = "A", description = "--finetune lora or "
      + "qlora: the "
      + "adapters' scale numerator, output times A/R (default 2R; 1/1024 to 2097152).")
  Double loraAlpha;

  @Option(names = "--lora-targets", paramLabel = "LIST", description = "--finetune lora or "
      + "qlora: the "
      + "projections adapted, comma-separated: q_proj, k_proj, v_proj, o_proj, gate_proj, "
      + "up_proj, down_proj (each its own adapter); linear_qkv, linear_fc1 (one adapter over "
      + "the fused projections, Megatron-Core), linear_proj, linear_fc2; wq, wkv, wo, w1, w2, w3"
      + ", wqkv (torchtitan); attention, mlp, all-linear (default).")
  String loraTargets;

  @Option(names = "--fp8-param-gather", description = "With --dtype fp8: the block "
      + "projections are stored in FP8 (E4M3, one byte a weight) and read by their GEMMs without "
      + "a cast, as Megatron-LM's --fp8-param-gather and NeMo's fp8_params keep them "
      + "(Transformer Engine's fp8_model_init); embeddings, norms and the head stay bf16. In "
      + "full training the distributed optimizer (which it needs) keeps the fp32 master and "
      + "all-gathers the weights in FP8; with --finetune lora the frozen base is stored so.")
  Boolean fp8ParamGather;

  @Option(names = "--activation-func-fp8-input-store", description = "SwiGLU models: the "
      + "input of each SwiGLU (the gate and up projections' outputs) is saved for the backward "
      + "pass as an FP8 E4M3 copy and cast back there, which halves those activations, as "
      + "Megatron-Core's activation_func_fp8_input_store does (NeMo and Megatron-Bridge set it; "
      + "MLPerf's Llama 2 70B LoRA runs it as FP8_ACT=1). Any training precision.")
  Boolean fp8ActivationInput;

  @Option(names = "--mtp-num-layers", paramLabel = "N", description = "Models with "
      + "multi-token prediction (DeepSeek-V3, Nemotron 3 Super, or a hybrid given a module by "
      + "--mtp-hybrid-override-pattern): train N prediction depths after the last layer, as "
      + "Megatron-LM's --mtp-num-layers (0 trains none; default: the model's). Each depth is the "
      + "model's module: a block, or a hybrid's prediction layers.")
  Integer mtpNumLayers;

  @Option(names = "--mtp-use-repeated-layer", description = "With multi-token prediction: every "
      + "depth runs the first depth's module again, so its weights, gradients and optimizer "
      + "state are one module's, as Megatron-LM's --mtp-use-repeated-layer (Nemotron 3 Super's "
      + "recipes train its one module for 2 depths so).")
  Boolean mtpRepeated;

  @Option(names = "--mtp-hybrid-override-pattern", paramLabel = "LAYERS", description = "Hybrid "
      + "models (Nemotron-H, Nemotron 3): the layers of the multi-token prediction module, in "
      + "the symbols of the model's own pattern (M Mamba-2, * attention, - MLP, E experts), "
      + "each priced as the model's layers of its kind, as Megatron-Core's "
      + "mtp_hybrid_override_pattern; with --mtp-num-layers N, the depths that run it (the "
      + "model's own when it has a module). Nemotron 3.5 Lightning's recipes train Nemotron 3 "
      + "Nano with '*E' at 2 repeated depths.")
  String mtpPattern;

  @Option(names = "--dtype", completionCandidates = Choices.Dtypes.class,
      description = "Element type: f32, bf16, f16, or fp8 (Transformer Engine's hybrid recipe:"
      + " linear-layer GEMMs in FP8, the rest bf16; H100, H200, B200) (default: preset's). One"
      + " of: ${COMPLETION-CANDIDATES}.")
  String dtype;

  @Option(names = "--fp8-recipe", paramLabel = "RECIPE", description = "--dtype fp8: how each "
      + "tensor is scaled, Megatron-LM's --fp8-recipe: delayed (default; Transformer Engine's "
      + "DelayedScaling, from earlier steps' amax) or tensorwise (Float8CurrentScaling, from "
      + "this step's amax; Megatron-Bridge's fp8_cs) or mxfp8 (MXFP8BlockScaling, one scale per "
      + "32 elements; Blackwell only; Megatron-Bridge's fp8_mx) or nvfp4 (NVFP4BlockScaling: "
      + "4-bit GEMM operands, one scale per 16 elements; Blackwell only; Megatron-LM's "
      + "--fp4-format e2m1 --fp4-recipe nvfp4). Each is priced by Transformer Engine's "
      + "measured GEMMs with their casts. Under delayed scaling Megatron-Core refuses to "
      + "recompute norms or the experts' activation.")
  String fp8Recipe;

  @Option(names = "--optimizer-state", paramLabel = "PRECISION", description = "What Adam "
      + "keeps: fp32 (default; mixed precision: an fp32 master copy of each trained weight, "
      + "fp32 moments and gradients, 16 bytes a parameter with its bf16 weight) or bf16 (the "
      + "bf16 weights are the optimizer's own, as torch.optim.Adam keeps a bf16 model: bf16 "
      + "moments and gradients, 8 bytes a parameter; NeMo AutoModel's MoE recipes). Needs bf16 "
      + "or fp8 training.")
  String optimizerState;

  /** Model flags for the transformer decoders ({@link #DECODERS}). */
  ModelOptions() {
    this(DECODERS);
  }

  /**
   * Model flags for the given families.
   *
   * @param families the families the command runs; other presets are refused
   */
  ModelOptions(Set<ModelSpec.Family> families) {
    this.families = families;
  }

  /**
   * The presets the command runs, in catalog order: those of its families, and for shard only
   * those whose blocks its LLaMA graph builds (not the mixture-of-experts presets).
   *
   * @return the names
   */
  List<String> presets() {
    List<String> out = new ArrayList<>();
    for (String n : Presets.names()) {
      ModelSpec s = Presets.get(n);
      if (families.contains(s.family())
          && (!families.equals(SHARD_FAMILIES) || s.arch().beyondLlama().isEmpty())) {
        out.add(n);
      }
    }
    return out;
  }

  /**
   * The Hugging Face {@code model_type}s the command takes: those of its families, and for shard
   * only those whose blocks are LLaMA's ({@link io.meshplan.model.HfModelType}).
   *
   * @return the names
   */
  List<String> configTypes() {
    return io.meshplan.model.HfModelType.names(families, families.equals(SHARD_FAMILIES));
  }

  /**
   * The {@code --dtype} words the command takes: shard plans a forward graph in one element
   * type, so not the FP8 training recipe.
   *
   * @return the words
   */
  List<String> dtypes() {
    List<String> words = new ArrayList<>();
    new Choices.Dtypes().forEach(words::add);
    if (families.equals(SHARD_FAMILIES)) {
      words.remove(Fp8Training.WORD);
    }
    return words;
  }

  /** Shard's {@code --dtype}: its own words and no word on FP8 training. */
  private static void shardDtype(picocli.CommandLine.Model.CommandSpec spec, ModelOptions mo) {
    picocli.CommandLine.Model.OptionSpec old = spec.findOption("--dtype");
    spec.remove(old);
    spec.addOption(picocli.CommandLine.Model.OptionSpec.builder(old)
        .completionCandidates(mo.dtypes()).description("Element type of the forward graph"
            + " (default: the preset's). One of: ${COMPLETION-CANDIDATES}.").build());
  }

  /**
   * Takes the multi-token prediction flags off a command that builds no prediction module
   * ({@code shard}: its forward graphs are LLaMA's, and it refuses the models that have one), so
   * that its help does not list them and giving one is an unknown option.
   *
   * @param command the command's line
   */
  static void dropPredictionFlags(picocli.CommandLine command) {
    picocli.CommandLine.Model.CommandSpec spec = command.getCommandSpec();
    for (String name : List.of("--mtp-num-layers", "--mtp-use-repeated-layer",
        "--mtp-hybrid-override-pattern")) {
      picocli.CommandLine.Model.OptionSpec o = spec.findOption(name);
      if (o != null) {
        spec.remove(o);
      }
    }
  }

  /**
   * Puts the presets and the config.json model_types each command runs at the head of its
   * help's footer, so that the help lists exactly what the command takes.
   *
   * @param root the meshplan command line
   */
  static void describePresets(picocli.CommandLine root) {
    for (picocli.CommandLine sub : root.getSubcommands().values()) {
      var spec = sub.getCommandSpec();
      var mixin = spec.mixins().get("model");
      if (mixin == null || !(mixin.userObject() instanceof ModelOptions mo)) {
        continue;
      }
      if (mo.families.equals(SHARD_FAMILIES)) {
        shardDtype(spec, mo);
      }
      List<String> lines = new ArrayList<>(List.of("", "Model presets (--model):"));
      lines.addAll(wrapped(mo.presets()));
      lines.addAll(List.of("", "Hugging Face config.json model_types (--model PATH):"));
      lines.addAll(wrapped(mo.configTypes()));
      lines.addAll(List.of(spec.usageMessage().footer()));
      spec.usageMessage().footer(lines.toArray(String[]::new));
    }
  }

  /** Names as comma-separated lines of at most 78 characters, indented by two spaces. */
  static List<String> wrapped(List<String> names) {
    List<String> lines = new ArrayList<>();
    StringBuilder line = new StringBuilder(" ");
    for (String n : names) {
      if (line.length() + n.length() + 2 > 78) {
        lines.add(line.toString().stripTrailing());
        line = new StringBuilder(" ");
      }
      line.append(' ').append(n).append(',');
    }
    lines.add(line.substring(0, line.length() - 1));
    return lines;
  }

  /**
   * The first flag given that changes a preset's model or its training (sizes, routing,
   * packed documents, LoRA), for refusing them where no preset is used.
   *
   * @return e.g. "--layers", or null when none was given
   */
  String overrides() {
    return given().stream().filter(f -> !f.equals("--model")).findFirst().orElse(null);
  }

  /**
   * The file {@code --model} reads when it names a {@code config.json}, so that no output
   * replaces it.
   *
   * @return flag to file: empty for a preset
   */
  java.util.Map<String, Path> inputFiles() {
    Path file = model == null ? null : CliValues.existingFile(model);
    java.util.Map<String, Path> files = new java.util.LinkedHashMap<>();
    if (file != null) {
      // A directory is read as the config.json inside it: that is the input to protect.
      files.put("--model", io.meshplan.model.HfConfigReader.configFile(file));
    }
    if (packedSeqs != null) {
      files.put("--packed-seqs", packedSeqs);
    }
    return files;
  }

  /**
   * The model flags given, by name: with {@code --plan}, which carries its model, each is
   * refused rather than ignored.
   *
   * @return the flags given, in declaration order
   */
  List<String> given() {
    Object[][] flags = {{"--model", model}, {"--moe-capacity-factor", capacityFactor},
        {"--moe-imbalance", imbalance}, {"--layers", layers}, {"--batch", batch}, {"--seq", seq},
        {"--hidden", hidden}, {"--heads", heads}, {"--kv-heads", kvHeads},
        {"--ffn", ffn}, {"--vocab", vocab}, {"--mean-doc-len", meanDocLen},
        {"--packed-seqs", packedSeqs}, {"--finetune", finetune}, {"--lora-rank", loraRank},
        {"--lora-alpha", loraAlpha}, {"--lora-targets", loraTargets},
        {"--fp8-param-gather", fp8ParamGather},
        {"--activation-func-fp8-input-store", fp8ActivationInput}, {"--dtype", dtype},
        {"--fp8-recipe", fp8Recipe}, {"--optimizer-state", optimizerState}};
    return CliValues.given(flags);
  }

  /**
   * The documents packed into each sequence: {@code --mean-doc-len} or {@code --packed-seqs}.
   *
   * @return the packing, {@link io.meshplan.model.Packing#NONE} without either flag
   */
  io.meshplan.model.Packing packing() {
    if (meanDocLen != null && packedSeqs != null) {
      throw new InputException("give --mean-doc-len or --packed-seqs, not both");
    }
    if (meanDocLen != null) {
      if (meanDocLen <= 0) {
        throw new InputException("--mean-doc-len must be a positive number of tokens, got "
            + meanDocLen);
      }
      return io.meshplan.model.Packing.meanLength(meanDocLen);
    }
    if (packedSeqs != null) {
      String text = io.meshplan.util.InputFiles.readString(packedSeqs,
          io.meshplan.model.PackingText.MAX_BYTES, "document-length file");
      return io.meshplan.model.PackingText.parse(packedSeqs.toString(), text);
    }
    return io.meshplan.model.Packing.NONE;
  }

  /**
   * The adapters of {@code --finetune lora}, on a quantized base under {@code qlora}, on an FP8
   * base with {@code --fp8-param-gather}; in full training, no adapters, on FP8 weights with
   * {@code --fp8-param-gather}.
   *
   * @param gated whether the model's MLP is gated
   * @param t the training precision, which FP8 weights need to be the FP8 recipe
   * @return the adapters, {@link io.meshplan.model.Lora#NONE} for full training in the training
   *     precision
   */
  io.meshplan.model.Lora lora(boolean gated, DType t) {
    String mode = finetune == null ? "full" : Choices.pick("--finetune", finetune,
        List.of("full", "lora", "qlora"));
    if (fp8ParamGather != null && mode.equals("qlora")) {
      throw new InputException("--fp8-param-gather stores the base in FP8 and --finetune qlora "
          + "in NF4; give one");
    }
    if (fp8ParamGather != null && !Fp8Training.on(t)) {
      throw new InputException("--fp8-param-gather stores the weights in FP8 for FP8 training; "
          + "it needs --dtype fp8, and the precision is " + Fp8Training.word(t));
    }
    if (mode.equals("full")) {
      String stray = loraRank != null ? "--lora-rank" : loraAlpha != null ? "--lora-alpha"
          : loraTargets != null ? "--lora-targets" : null;
      if (stray != null) {
        throw new InputException(stray + " needs --finetune lora or qlora");
      }
      return fp8ParamGather != null ? io.meshplan.model.Lora.FP8_WEIGHTS
          : io.meshplan.model.Lora.NONE;
    }
    int r = loraRank == null ? 16 : loraRank;
    if (r < 1) {
      throw new InputException("--lora-rank must be at least 1, got " + r);
    }
    double a = loraAlpha == null ? 2.0 * r : loraAlpha;
    if (!Double.isFinite(a) || a < io.meshplan.model.Lora.MIN_ALPHA
        || a > io.meshplan.model.Lora.MAX_ALPHA) {
      throw new InputException("--lora-alpha must be a number from 1/1024 to "
          + (long) io.meshplan.model.Lora.MAX_ALPHA + ", got " + loraAlpha);
    }
    io.meshplan.model.Lora l = io.meshplan.model.Lora.of(r, a,
        loraTargets == null ? "all-linear" : loraTargets, gated);
    return mode.equals("qlora") ? l.withQuantizedBase()
        : fp8ParamGather != null ? l.withBase(io.meshplan.model.Lora.Base.FP8) : l;
  }

  /**
   * Whether {@code --activation-func-fp8-input-store} stores the SwiGLU inputs in FP8, which
   * Megatron-Core takes for SwiGLU only.
   *
   * @param mlp the model's MLP
   * @return true with the flag
   */
  private boolean fp8ActivationInput(Architecture.Mlp mlp) {
    if (fp8ActivationInput != null && mlp != Architecture.Mlp.SWIGLU) {
      throw new InputException("--activation-func-fp8-input-store stores a SwiGLU's input, as "
          + "Megatron-Core does for SwiGLU only; this model's MLP is "
          + mlp.name().toLowerCase(java.util.Locale.ROOT));
    }
    return fp8ActivationInput != null;
  }

  /**
   * The optimizer state of {@code --optimizer-state}, whose bf16 needs bf16 weights.
   *
   * @param t the training precision
   * @return the precision, fp32 without the flag
   */
  private io.meshplan.model.OptimizerState optimizerState(DType t) {
    if (optimizerState == null) {
      return io.meshplan.model.OptimizerState.FP32;
    }
    // The word exactly, in any case: a value with a line break or a space names nothing.
    io.meshplan.model.OptimizerState s = io.meshplan.model.OptimizerState.parse(
        optimizerState).orElseThrow(() -> new InputException("--optimizer-state must "
            + "be fp32 or bf16, got '" + optimizerState + "'"));
    if (!s.heldBy(t)) {
      throw new InputException("--optimizer-state bf16 is the bf16 weights themselves; it needs "
          + "--dtype bf16 or fp8, and the precision is " + Fp8Training.word(t));
    }
    return s;
  }

  /**
   * The FP8 scaling of {@code --fp8-recipe}, which needs the FP8 training precision.
   *
   * @param t the training precision
   * @return the scaling, delayed without the flag
   */
  private io.meshplan.model.Fp8Scaling fp8Scaling(DType t) {
    if (fp8Recipe == null) {
      return io.meshplan.model.Fp8Scaling.DELAYED;
    }
    if (!Fp8Training.on(t)) {
      throw new InputException("--fp8-recipe scales FP8 training; it needs --dtype fp8, and the "
          + "precision is " + Fp8Training.word(t));
    }
    return io.meshplan.model.Fp8Scaling.parse(Words.trimmed(fp8Recipe)).orElseThrow(
        () -> new InputException("--fp8-recipe must be "
            + io.meshplan.model.Fp8Scaling.words() + ", got '" + fp8Recipe + "'"));
  }

  /**
   * The preset with the overrides applied.
   *
   * @return the model spec
   */
  ModelSpec spec() {
    if (model == null) {
      throw new InputException("--model is required; valid presets: "
          + String.join(", ", presets()));
    }
    if (families.equals(SHARD_FAMILIES)) {
      // shard builds one forward graph: documents and frozen weights change a training step.
      for (String flag : given()) {
        if (List.of("--mean-doc-len", "--packed-seqs", "--finetune", "--lora-rank",
            "--lora-alpha", "--lora-targets", "--fp8-recipe", "--optimizer-state")
            .contains(flag)) {
          throw new InputException(flag + " prices a training step, which shard does not build "
              + "(it shards one forward graph); use plan or simulate");
        }
      }
    }
    ModelSpec p = base(model);
    requireFamily(p);
    DType t = p.dtype();
    if (dtype != null) {
      if (families.equals(SHARD_FAMILIES)
          && Words.trimmed(dtype).equalsIgnoreCase(Fp8Training.WORD)) {
        throw new InputException("--dtype fp8 is a training recipe (FP8 GEMMs in a bf16 step)"
            + " that plan, simulate, export and sweep price; shard plans a forward graph in one"
            + " element type: use --dtype bf16");
      }
      // Training runs in floating point; integer or boolean weights would make every dot free.
      t = Fp8Training.parse(Choices.pick("--dtype", dtype, dtypes()));
    }
    int h = pos("--hidden", hidden, p.hidden());
    int nh = pos("--heads", heads, p.heads());
    int kv = pos("--kv-heads", kvHeads, kvHeads == null && heads != null ? nh : p.kvHeads());
    // The generic GPT keeps Megatron's 4h feed-forward when only the hidden size is overridden.
    // 4h saturates: a --hidden past ModelSpec.MAX_HIDDEN is refused below by its own name.
    int ffnDefault = p.name().equals("gpt") && p.family() == ModelSpec.Family.GPT
        ? (int) Math.min(Integer.MAX_VALUE, 4L * h) : p.ffn();
    int s = pos("--seq", seq, p.seq());
    if (meanDocLen != null && meanDocLen > s) {
      // Documents longer than the sequence fill every sequence with a piece of one: no packing.
      throw new InputException("--mean-doc-len " + meanDocLen + " exceeds the sequence length "
          + s + ": each sequence would hold a piece of one document, which trains as without "
          + "packing; give a shorter length or drop --mean-doc-len");
    }
    int f = pos("--ffn", ffn, ffnDefault);
    Architecture arch = p.arch().forSequence(s);
    try {
      // A mixture-of-experts model's ffn is its expert size: --ffn resizes the experts.
      if (arch.moe().routed() && f != arch.moe().expertFfn()) {
        arch = arch.withMoe(arch.moe().withExpertFfn(f));
      }
      arch = routing(arch);
      arch = prediction(arch);
      ModelSpec m = new ModelSpec(p.name(), p.family(), p.layers(), h, nh, kv, f,
          pos("--vocab", vocab, p.vocab()), s, pos("--batch", batch, p.batch()), t, arch);
      // --layers keeps the first blocks, with their kinds where dense blocks mix in.
      int l = pos("--layers", layers, p.layers());
      ModelSpec kept = l == p.layers() ? m : m.withLayers(l);
      boolean asked = mtpPattern != null || mtpNumLayers != null && mtpNumLayers > 0;
      if (asked && m.arch().mtpDepth() > 0 && kept.arch().mtpDepth() == 0) {
        // A hybrid's module is priced as the model's own layers of its kinds: the first l
        // layers must still hold each of them, or the depths the flags ask for would vanish.
        throw new InputException("--layers " + l + " keeps the layers '"
            + kept.arch().hybrid().symbols() + "', which lack a kind of layer of the prediction "
            + "module '" + m.arch().hybrid().mtp() + "' that "
            + (mtpPattern != null ? "--mtp-hybrid-override-pattern" : "--mtp-num-layers")
            + " asks for; keep more layers or train no prediction depth");
      }
      return kept.withPacking(packing())
          .withLora(lora(arch.mlp().gated(), t)).withFp8Scaling(fp8Scaling(t))
          .withOptimizerState(optimizerState(t))
          .withFp8ActivationInput(fp8ActivationInput(arch.mlp()));
    } catch (IllegalArgumentException | ArithmeticException e) {
      throw new InputException(FlagWords.reword(e.getMessage(), FlagWords.MODEL));
    }
  }

  /**
   * The architecture with the multi-token prediction flags applied: {@code --mtp-num-layers}
   * depths of the model's module, and {@code --mtp-use-repeated-layer} sharing one module's
   * weights among them.
   */
  private Architecture prediction(Architecture a) {
    if (mtpNumLayers != null
        && (mtpNumLayers < 0 || mtpNumLayers > Architecture.MAX_MTP_DEPTH)) {
      throw new InputException("--mtp-num-layers must be from 0 to "
          + Architecture.MAX_MTP_DEPTH + ", got " + mtpNumLayers);
    }
    Architecture out = mtpPattern == null ? a : predictionLayers(a);
    if (mtpNumLayers != null) {
      if (mtpNumLayers > 0 && out.mtpDepth() == 0) {
        throw new InputException("--mtp-num-layers " + mtpNumLayers + ": the model has no "
            + "multi-token prediction module (DeepSeek-V3 and Nemotron 3 Super have one; a "
            + "hybrid model takes one with --mtp-hybrid-override-pattern)");
      }
      out = out.withMtp(mtpNumLayers);
    }
    if (Boolean.TRUE.equals(mtpRepeated)) {
      if (out.mtpDepth() == 0) {
        throw new InputException("--mtp-use-repeated-layer: the model trains no multi-token "
            + "prediction depth to repeat");
      }
      out = out.withMtpShared(true);
    }
    return out;
  }

  /**
   * A hybrid architecture whose prediction module is {@code --mtp-hybrid-override-pattern}'s
   * layers, at {@code --mtp-num-layers} depths or, without it, the model's own (which it must
   * have).
   */
  private Architecture predictionLayers(Architecture a) {
    String flag = "--mtp-hybrid-override-pattern";
    if (!a.hybrid().on()) {
      throw new InputException(flag + ": the model is not a hybrid of Mamba and attention "
          + "layers; an ordinary decoder's prediction module is a block (--mtp-num-layers alone)");
    }
    io.meshplan.model.HybridPattern.requireModuleLayers(flag, mtpPattern);
    int depth = mtpNumLayers != null ? mtpNumLayers : a.mtpDepth();
    if (depth == 0) {
      throw new InputException(flag + " gives the layers of a prediction module, but "
          + (mtpNumLayers != null ? "--mtp-num-layers 0 trains none"
              : "the model trains none; give --mtp-num-layers N, the depths that run it"));
    }
    try {
      // HybridPattern refuses a layer of a kind the model's own pattern lacks.
      return a.withHybrid(a.hybrid().withMtp(mtpPattern), depth);
    } catch (IllegalArgumentException e) {
      throw new InputException(flag + ": " + e.getMessage(), e);
    }
  }

  /**
   * The architecture with the routing flags applied: {@code --moe-capacity-factor} and {@code
   * --moe-imbalance}, on a mixture-of-experts model only.
   */
  private Architecture routing(Architecture a) {
    if (capacityFactor == null && imbalance == null) {
      return a;
    }
    io.meshplan.model.MoeShape moe = a.moe();
    if (!moe.routed()) {
      throw new InputException((capacityFactor != null ? "--moe-capacity-factor" : "--moe-imbalance")
          + " needs a mixture-of-experts model; this model is dense");
    }
    // Published factors run 1.0 to 2.0 (Switch Transformer 1.25, GShard 2.0); 1/1024 drops
    // nearly every token and 1,024 drops none, so past them a factor is a typo, not a recipe.
    if (capacityFactor != null && !(capacityFactor >= 1.0 / 1024 && capacityFactor <= 1024)) {
      throw new InputException("--moe-capacity-factor must be a number from 1/1024 to 1024, got "
          + capacityFactor + " (leave it out for dropless routing)");
    }
    if (imbalance != null && !(imbalance >= 1 && imbalance <= moe.experts())) {
      throw new InputException("--moe-imbalance must be a number of at least 1 and at most the "
          + moe.experts() + " experts (the busiest GPU cannot take more than every token), got "
          + imbalance);
    }
    return a.withMoe(moe.withRouting(capacityFactor == null ? moe.capacityFactor()
        : capacityFactor, imbalance == null ? moe.imbalance() : imbalance));
  }

  /** Refuses a model of a family the command does not run, naming the command that does. */
  private void requireFamily(ModelSpec p) {
    if (families.contains(p.family())) {
      return;
    }
    String why = p.family() == ModelSpec.Family.ALPA_MLP
        ? " is Alpa's MLP test step, not a transformer decoder: a model for meshplan shard"
        : ": shard plans the forward graph of LLaMA-family models and alpa-mlp; GPT, OPT and "
            + "GPT-NeoX models are planned by meshplan plan";
    throw new InputException("--model " + model + why + "; presets here: "
        + String.join(", ", presets()));
  }

  /** A preset, or a config.json when the value names an existing file or ends in .json. */
  private ModelSpec base(String value) {
    Path path;
    try {
      path = Path.of(value);
    } catch (InvalidPathException e) {
      return preset(value);
    }
    if (!Presets.contains(value) && (value.endsWith(".json") || Files.exists(path))) {
      HfConfigReader.HfConfig c = HfConfigReader.readConfig(path, configTypes());
      configWarnings = c.warnings();
      sequenceNote = c.sequenceNote();
      return c.spec();
    }
    return preset(value);
  }

  /** A preset, or a refusal listing the presets this command runs (not the whole catalog). */
  private ModelSpec preset(String value) {
    if (!Presets.contains(value)) {
      throw new InputException("unknown model preset '" + value + "'; valid presets: "
          + String.join(", ", presets()) + "; or the path of a config.json of model_type "
          + String.join(", ", configTypes()));
    }
    return Presets.get(value);
  }

  /**
   * Prints the warnings of the config.json {@link #spec()} read, one line each, and, without
   * {@code --seq}, a note when its default sequence is below its context.
   *
   * @param err the error stream
   */
  void printWarnings(java.io.PrintWriter err) {
    for (String w : configWarnings) {
      err.println(ExceptionMapper.warning(w));
    }
    if (seq == null) {
      sequenceNote.ifPresent(n -> err.println(ExceptionMapper.note(n)));
    }
  }

  private static int pos(String flag, Integer v, int dflt) {
    if (v == null) {
      return dflt;
    }
    if (v <= 0) {
      throw new InputException(flag + " must be positive, got " + v);
    }
    return v;
  }
}
