package io.meshplan.plan;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.meshplan.graph.DType;
import io.meshplan.model.Architecture;
import io.meshplan.model.Attention;
import io.meshplan.model.AttentionShape;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.MoeShape;
import io.meshplan.model.Overlaps;
import io.meshplan.model.Recompute;
import io.meshplan.util.InputException;
import io.meshplan.util.JsonErrors;
import io.meshplan.util.TreeReaders;
import java.util.ArrayList;
import java.util.List;

/**
 * The versioned JSON form of a {@link PipelinePlan}: what {@code plan --out} writes and {@code
 * simulate --plan}, {@code export --plan} and {@code deploy --plan} read. Field names are a contract
 * (docs/ARCHITECTURE.md): {@code stages[]} with {@code layers} [first, last], {@code submesh} [n, m], {@code
 * logicalMesh} [a, b] and {@code peakMemoryBytes}, plus {@code microbatches}, {@code
 * iterationSeconds}, {@code tokensPerSecond}, {@code tflopsPerGpu} and {@code mfu}.
 *
 * <p>Version 1 grew optional fields, which files written before them lack and which the reader
 * therefore does not require: {@code communicationBytes} (all GPUs, per iteration) and {@code
 * communicationBytesPerGpu} (the mean per GPU) at the top level and {@code
 * communicationBytesPerGpu} per stage, each an object with {@code tensorParallel}, {@code
 * dataParallel} and {@code pipeline} in bytes (see {@link AxisBytes}), and in it {@code
 * expertParallel} and {@code contextParallel} (0 where absent: files written before the
 * exchanges were counted apart counted them in {@code dataParallel}); and in the model's
 * {@code architecture}, written only for a model that has them, {@code moe} ({@code experts},
 * {@code expertsPerToken}, {@code expertFfn}, {@code sharedExpertFfn}, {@code expertBiases}, and
 * for a model with dense blocks among its expert blocks {@code denseLayers} and {@code denseFfn},
 * for group-limited routing {@code routerGroups} and {@code routerGroupTopK}; a model without it
 * is dense), {@code attention.sinks}, {@code attention.mla} ({@code
 * qLoraRank}, {@code kvLoraRank}, {@code qkNopeHeadDim}, {@code qkRopeHeadDim}, {@code
 * vHeadDim}), {@code mtpLayers} and {@code mtpShared} (the depths run one module's weights).
 *
 * <p>The plan of an HLO module ({@link PlanSource.HloModule}) has a {@code source} object ({@code
 * kind} "hlo", the module's {@code path} and {@code sha256}) and the module's name and layers in
 * place of {@code model}; a plan without {@code source} is the plan of its {@code model}.
 */
public final class PlanJson {
  /** The value of the {@code format} field. */
  public static final String FORMAT = "meshplan-plan";
  /** The version this code writes and reads. */
  public static final int VERSION = 1;
  /** The value of {@code source.kind} in the plan of an HLO module. */
  public static final String HLO_KIND = "hlo";
  /**
   * The most layer names a plan file may list: an HLO module's layers are scopes of its
   * instructions, and {@code plan --hlo} takes at most 200,000 instructions.
   */
  private static final int MAX_LAYER_NAMES = 200_000;

  private static final ObjectMapper MAPPER = new ObjectMapper()
      .enable(SerializationFeature.INDENT_OUTPUT);

  private PlanJson() {}

  /*
   * The fields each object of a plan file may hold: what write() and writeModule() put there,
   * and at the top level what the commands add to a plan they save (prices, profile, catalog,
   * memoryPerGpu, clusterDescription, finetune, for, frameworks, timeToTrain, weights, fallbacks
   * and the 90% bands). PlanJsonFieldsTest writes plans of every kind and reads each back.
   */
  private static final java.util.Set<String> ADDED_BY_COMMANDS = java.util.Set.of("prices",
      "profile", "catalog", "memoryPerGpu", "clusterDescription", "finetune", "for", "frameworks",
      "timeToTrain", "weights", "fallbacks", "iterationSecondsBand", "tokensPerSecondBand");
  static final java.util.Set<String> TOP = union(ADDED_BY_COMMANDS, "format", "version", "model",
      "cluster", "gpus", "globalBatch", "microbatchSequences", "microbatches", "schedule",
      "virtualStages", "attention", "attentionKernel", "overlaps", "iterationSeconds",
      "tokensPerSecond", "tflopsPerGpu", "mfu", "peakMemoryBytesPerGpu", "communicationBytes",
      "communicationBytesPerGpu", "stages");
  static final java.util.Set<String> MODULE_TOP = union(ADDED_BY_COMMANDS, "format", "version",
      "source", "module", "cluster", "gpus", "layerNames", "microbatches", "schedule",
      "iterationSeconds", "tokensPerSecond", "microbatchesPerSecond", "tflopsPerGpu", "mfu",
      "peakMemoryBytesPerGpu", "communicationBytes", "communicationBytesPerGpu", "stages");
  static final java.util.Set<String> MODULE_STAGE = java.util.Set.of("layers", "submesh",
      "firstDevice", "logicalMesh", "forwardSeconds", "backwardSeconds", "peakMemoryBytes",
      "communicationBytesPerGpu", "tensors");
  static final java.util.Set<String> STAGE = union(MODULE_STAGE, "stage", "chunk", "microBatch",
      "recompute", "recomputeLayers", "sequenceParallel", "zeroStage", "shardGroup", "layouts",
      "expertParallel", "expertTensorParallel", "contextParallel", "cpCommType");
  static final java.util.Set<String> OVERLAPS = java.util.Set.of("gradReduce", "paramGather",
      "tensorComm", "fsdpPrefetch", "gradAccumFusion", "moeComm", "lossFusion", "bf16GradReduce",
      "moeDispatcher", "hsdpStepReduce");
  static final java.util.Set<String> MODEL = java.util.Set.of("name", "family", "layers",
      "hidden", "heads", "kvHeads", "ffn", "vocab", "seq", "dtype", "fp8Recipe",
      "optimizerState", "fp8ActivationInput", "fp8ParamGather", "parameters", "packing", "lora",
      "architecture");
  static final java.util.Set<String> ARCHITECTURE = java.util.Set.of("mlp", "norm", "positions",
      "positionRows", "biases", "tiedEmbeddings", "attention", "mtpLayers", "mtpShared", "moe",
      "hybrid", NumericsJson.FIELD);
  static final java.util.Set<String> ATTENTION = java.util.Set.of("headDim", "qkvBias", "qkNorm",
      "blockNorms", "attentionSoftcap", "finalSoftcap", "window", "globalEvery", "windowFrom",
      "sinks", "chunked", "mla");
  static final java.util.Set<String> MLA = java.util.Set.of("qLoraRank", "kvLoraRank",
      "qkNopeHeadDim", "qkRopeHeadDim", "vHeadDim");
  static final java.util.Set<String> MOE = java.util.Set.of("experts", "expertsPerToken",
      "expertFfn", "sharedExpertFfn", "expertBiases", "denseLayers", "denseFfn", "routerGroups",
      "routerGroupTopK", "sharedExpertGate", "latentWidth");
  static final java.util.Set<String> HYBRID = java.util.Set.of("pattern", "mtpPattern", "mamba",
      "gatedDeltaNet", "mamba1", "attentionGate");
  static final java.util.Set<String> MAMBA = java.util.Set.of("heads", "headDim", "state",
      "groups", "convKernel", "chunk", "normGroups", "convBias", "projBias");
  static final java.util.Set<String> GATED_DELTA_NET = java.util.Set.of("keyHeads", "valueHeads",
      "keyHeadDim", "valueHeadDim", "convKernel", "chunk");
  static final java.util.Set<String> MAMBA1 = java.util.Set.of("inner", "state", "convKernel",
      "dtRank", "convBias", "projBias", "innerNorms");
  static final java.util.Set<String> LORA = java.util.Set.of("rank", "alpha", "targets", "base",
      "trainableParameters");
  static final java.util.Set<String> PACKING = java.util.Set.of("lengths", "counts");
  static final java.util.Set<String> FINETUNE = java.util.Set.of("mode", "rank", "alpha",
      "targets", "trainableParameters", "frozenParameters", "fp8ParamGather");
  static final java.util.Set<String> AXIS_BYTES = java.util.Set.of("tensorParallel",
      "dataParallel", "pipeline", "expertParallel", "contextParallel");
  static final java.util.Set<String> TENSOR = java.util.Set.of("name", "shape", "sharding",
      "words");

  private static java.util.Set<String> union(java.util.Set<String> base, String... more) {
    java.util.Set<String> all = new java.util.HashSet<>(base);
    all.addAll(java.util.List.of(more));
    return java.util.Set.copyOf(all);
  }

  /**
   * Writes a plan.
   *
   * @param plan the plan
   * @return pretty-printed JSON text, ending in a newline
   */
  public static String write(PipelinePlan plan) {
    if (plan.source() instanceof PlanSource.HloModule h) {
      return text(writeModule(plan, h));
    }
    ObjectNode root = MAPPER.createObjectNode();
    root.put("format", FORMAT);
    root.put("version", VERSION);
    root.set("model", model(plan.model()));
    root.put("cluster", plan.cluster());
    root.put("gpus", plan.gpus());
    root.put("globalBatch", plan.globalBatchSize());
    root.put("microbatchSequences", plan.microbatchSequences());
    root.put("microbatches", plan.microbatches());
    root.put("schedule", plan.virtualStages() > 1 ? "interleaved-1f1b" : "1f1b");
    root.put("virtualStages", plan.virtualStages());
    root.put("attention", plan.attention().label());
    plan.attentionKernel().ifPresent(k -> root.put("attentionKernel", k.word()));
    putOverlaps(root.putObject("overlaps"), plan.overlaps());
    putPrediction(root, plan, "tokensPerSecond");
    ArrayNode stages = root.putArray("stages");
    int depth = plan.pipelineStages();
    for (int k = 0; k < plan.stages().size(); k++) {
      StagePlan s = plan.stages().get(k);
      ObjectNode o = stages.addObject();
      if (plan.virtualStages() > 1) {
        // A model chunk of the interleaved schedule: which stage's devices run it, and which of
        // that stage's chunks it is.
        o.put("stage", k % depth);
        o.put("chunk", k / depth);
      }
      o.putArray("layers").add(s.firstLayer()).add(s.lastLayer());
      o.putArray("submesh").add(s.submeshNodes()).add(s.submeshGpus());
      o.put("firstDevice", s.firstDevice());
      o.putArray("logicalMesh").add(s.dataParallel()).add(s.tensorParallel());
      o.put("microBatch", plan.microBatchSize(s));
      o.put("recompute", s.recompute().label());
      if (s.recomputeLayers() > 0) {
        o.put("recomputeLayers", s.recomputeLayers());
      }
      o.put("sequenceParallel", s.sequenceParallel());
      o.put("zeroStage", s.zeroStage());
      if (s.shardGroup() > 0) {
        o.put("shardGroup", s.shardGroup());
      }
      o.put("layouts", s.megatronLayouts() ? "megatron" : "ilp");
      if (s.expertParallel() > 1 || s.expertTensorParallel() > 1) {
        o.put("expertParallel", s.expertParallel());
        o.put("expertTensorParallel", s.expertTensorParallel());
      }
      if (s.contextParallel() > 1) {
        o.put("contextParallel", s.contextParallel());
        o.put("cpCommType", s.cpExchange().word());
      }
      o.put("forwardSeconds", s.forwardSeconds());
      o.put("backwardSeconds", s.backwardSeconds());
      o.put("peakMemoryBytes", s.peakMemoryBytes());
      s.commBytesPerGpu().ifPresent(b -> o.set("communicationBytesPerGpu", axisBytes(b)));
      putTensors(o, s.tensors());
    }
    return text(root);
  }

  /**
   * The overlaps a model plan was priced with; {@code moeComm}, {@code lossFusion} and {@code
   * bf16GradReduce} only when they are on, {@code moeDispatcher} only for DeepEP or Hybrid-EP.
   */
  private static void putOverlaps(ObjectNode ov, Overlaps planned) {
    ov.put("gradReduce", planned.gradReduce());
    ov.put("paramGather", planned.paramGather());
    ov.put("tensorComm", planned.tensorComm());
    ov.put("fsdpPrefetch", planned.fsdpPrefetch());
    ov.put("gradAccumFusion", planned.gradAccumFusion());
    if (planned.moeComm()) {
      ov.put("moeComm", true);
    }
    if (planned.lossFusion()) {
      ov.put("lossFusion", true);
    }
    if (planned.bf16GradReduce()) {
      ov.put("bf16GradReduce", true);
    }
    if (planned.dispatcher().deduplicates()) {
      ov.put("moeDispatcher", planned.dispatcher().word());
    }
    if (planned.hsdpStepReduce()) {
      ov.put("hsdpStepReduce", true);
    }
  }

  /**
   * The prediction's fields; the throughput under {@code rate}, with {@code tokensPerSecond} null
   * when the rate is another unit.
   */
  private static void putPrediction(ObjectNode root, PipelinePlan plan, String rate) {
    PipelinePlan.Prediction p = plan.prediction();
    root.put("iterationSeconds", p.iterationSeconds());
    if (!rate.equals("tokensPerSecond")) {
      root.putNull("tokensPerSecond");
    }
    root.put(rate, p.tokensPerSecond());
    root.put("tflopsPerGpu", p.tflopsPerGpu());
    root.put("mfu", p.mfu());
    root.put("peakMemoryBytesPerGpu", p.peakMemoryBytesPerGpu());
    p.commBytes().ifPresent(b -> root.set("communicationBytes", axisBytes(b)));
    plan.commBytesPerGpu().ifPresent(b -> root.set("communicationBytesPerGpu", axisBytes(b)));
  }

  private static String text(ObjectNode root) {
    try {
      return MAPPER.writeValueAsString(root) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialize a plan", e);
    }
  }

  /**
   * The plan of an HLO training step: {@code source} ({@code kind} "hlo", the module's {@code
   * path} and {@code sha256}), the {@code module}'s name and its {@code layerNames}; {@code
   * tokensPerSecond} is null because a module does not say which of its dimensions are tokens, and
   * {@code microbatchesPerSecond} gives the throughput. A stage has no batch, recomputation,
   * sequence-parallel or ZeRO fields: the module fixes them.
   */
  private static ObjectNode writeModule(PipelinePlan plan, PlanSource.HloModule h) {
    ObjectNode root = MAPPER.createObjectNode();
    root.put("format", FORMAT);
    root.put("version", VERSION);
    ObjectNode source = root.putObject("source");
    source.put("kind", HLO_KIND);
    source.put("path", h.path());
    source.put("sha256", h.sha256());
    root.put("module", h.module());
    root.put("cluster", plan.cluster());
    root.put("gpus", plan.gpus());
    ArrayNode names = root.putArray("layerNames");
    h.layerNames().forEach(names::add);
    root.put("microbatches", plan.microbatches());
    root.put("schedule", "1f1b");
    putPrediction(root, plan, "microbatchesPerSecond");
    ArrayNode stages = root.putArray("stages");
    for (StagePlan s : plan.stages()) {
      ObjectNode o = stages.addObject();
      o.putArray("layers").add(s.firstLayer()).add(s.lastLayer());
      o.putArray("submesh").add(s.submeshNodes()).add(s.submeshGpus());
      o.put("firstDevice", s.firstDevice());
      o.putArray("logicalMesh").add(s.dataParallel()).add(s.tensorParallel());
      o.put("forwardSeconds", s.forwardSeconds());
      o.put("backwardSeconds", s.backwardSeconds());
      o.put("peakMemoryBytes", s.peakMemoryBytes());
      s.commBytesPerGpu().ifPresent(b -> o.set("communicationBytesPerGpu", axisBytes(b)));
      putTensors(o, s.tensors());
    }
    return root;
  }

  /**
   * Writes the field {@code tensors}: each weight's {@code name}, {@code shape}, {@code sharding}
   * (XLA text) and {@code words}.
   *
   * @param o the object to add the field to
   * @param tensors the weights
   */
  public static void putTensors(ObjectNode o, java.util.List<TensorSharding> tensors) {
    ArrayNode ts = o.putArray("tensors");
    for (TensorSharding t : tensors) {
      ObjectNode to = ts.addObject();
      to.put("name", t.name());
      to.put("shape", t.shape());
      to.put("sharding", t.sharding());
      to.put("words", t.words());
    }
  }

  private static ObjectNode axisBytes(AxisBytes b) {
    ObjectNode o = MAPPER.createObjectNode();
    o.put("tensorParallel", b.tensorParallel());
    o.put("dataParallel", b.dataParallel());
    o.put("pipeline", b.pipeline());
    o.put("expertParallel", b.expertParallel());
    o.put("contextParallel", b.contextParallel());
    return o;
  }

  /**
   * Checks the plan's top-level {@code communicationBytesPerGpu}: the mean of {@code
   * communicationBytes} over the plan's GPUs, which a reader derives again and so does not keep, but
   * which must still be what the writer writes (an object of finite bytes >= 0), not anything at all.
   */
  private static void derivedBytesPerGpu(Fields plan) {
    axisBytes(plan, "communicationBytesPerGpu");
  }

  private static java.util.Optional<AxisBytes> axisBytes(Fields parent, String name) {
    if (!parent.has(name)) {
      return java.util.Optional.empty();
    }
    Fields b = parent.object(name).only(AXIS_BYTES);
    try {
      // Plan files of earlier versions counted both exchanges in dataParallel and have neither.
      return java.util.Optional.of(new AxisBytes(b.number("tensorParallel"),
          b.number("dataParallel"), b.number("pipeline"),
          b.has("expertParallel") ? b.number("expertParallel") : 0,
          b.has("contextParallel") ? b.number("contextParallel") : 0));
    } catch (IllegalArgumentException e) {
      throw new InputException(b.where() + ": " + e.getMessage());
    }
  }

  private static ObjectNode model(ModelSpec m) {
    ObjectNode o = MAPPER.createObjectNode();
    o.put("name", m.name());
    o.put("family", m.family().name().toLowerCase(java.util.Locale.ROOT));
    o.put("layers", m.layers());
    o.put("hidden", m.hidden());
    o.put("heads", m.heads());
    o.put("kvHeads", m.kvHeads());
    o.put("ffn", m.ffn());
    o.put("vocab", m.vocab());
    o.put("seq", m.seq());
    o.put("dtype", io.meshplan.model.Fp8Training.word(m.dtype()));
    if (io.meshplan.model.Fp8Training.on(m.dtype())) {
      o.put("fp8Recipe", m.fp8Scaling().word());
    }
    if (m.optimizerState() != io.meshplan.model.OptimizerState.FP32) {
      o.put("optimizerState", m.optimizerState().word());
    }
    if (m.fp8ActivationInput()) {
      o.put("fp8ActivationInput", true);
    }
    if (m.lora().fp8Weights()) {
      // Trained weights kept in FP8 (--fp8-param-gather); under adapters, model.lora.base says so.
      o.put("fp8ParamGather", true);
    }
    // As sum(p.numel()) over the model's parameters: LM head included, tied weights once.
    o.put("parameters", m.parameterCount());
    if (m.packing().packed()) {
      ObjectNode pk = o.putObject("packing");
      ArrayNode lengths = pk.putArray("lengths");
      for (int l : m.packing().lengths()) {
        lengths.add(l);
      }
      ArrayNode counts = pk.putArray("counts");
      for (long c : m.packing().counts()) {
        counts.add(c);
      }
    }
    if (m.lora().on()) {
      o.set("lora", loraNode(m));
    }
    ObjectNode a = o.putObject("architecture");
    a.put("mlp", m.arch().mlp().name().toLowerCase(java.util.Locale.ROOT));
    a.put("norm", m.arch().norm().name().toLowerCase(java.util.Locale.ROOT));
    a.put("positions", m.arch().positions().name().toLowerCase(java.util.Locale.ROOT));
    a.put("positionRows", m.arch().positionRows());
    a.put("biases", m.arch().biases());
    a.put("tiedEmbeddings", m.arch().tiedEmbeddings());
    AttentionShape s = m.arch().attn();
    if (!s.equals(AttentionShape.PLAIN)) {
      attention(a.putObject("attention"), s);
    }
    if (m.arch().mtpDepth() > 0) {
      a.put("mtpLayers", m.arch().mtpDepth());
      if (m.arch().mtpShared()) {
        a.put("mtpShared", true);
      }
    }
    NumericsJson.write(a, m.arch().numerics());
    MoeShape e = m.arch().moe();
    if (e.routed()) {
      ObjectNode x = a.putObject("moe");
      x.put("experts", e.experts());
      x.put("expertsPerToken", e.topK());
      x.put("expertFfn", e.expertFfn());
      x.put("sharedExpertFfn", e.sharedFfn());
      x.put("expertBiases", e.expertBiases());
      if (!e.denseLayers().isEmpty()) {
        ArrayNode dense = x.putArray("denseLayers");
        e.denseLayers().forEach(dense::add);
        x.put("denseFfn", e.denseFfn());
      }
      if (e.groups() > 1) {
        x.put("routerGroups", e.groups());
        x.put("routerGroupTopK", e.groupTopK());
      }
      if (e.sharedGate()) {
        x.put("sharedExpertGate", true);
      }
      if (e.latent() > 0) {
        x.put("latentWidth", e.latent());
      }
    }
    io.meshplan.model.HybridPattern hp = m.arch().hybrid();
    if (hp.on()) {
      ObjectNode y = a.putObject("hybrid");
      y.put("pattern", hp.symbols());
      if (!hp.mtp().isEmpty()) {
        y.put("mtpPattern", hp.mtp());
      }
      io.meshplan.model.MambaShape mm = hp.mamba();
      if (mm != null) {
        ObjectNode z = y.putObject("mamba");
        z.put("heads", mm.heads());
        z.put("headDim", mm.headDim());
        z.put("state", mm.state());
        z.put("groups", mm.groups());
        z.put("convKernel", mm.convKernel());
        z.put("chunk", mm.chunk());
        z.put("normGroups", mm.normGroups());
        z.put("convBias", mm.convBias());
        z.put("projBias", mm.projBias());
      }
      io.meshplan.model.GdnShape gd = hp.gdn();
      if (gd != null) {
        ObjectNode z = y.putObject("gatedDeltaNet");
        z.put("keyHeads", gd.keyHeads());
        z.put("valueHeads", gd.valueHeads());
        z.put("keyHeadDim", gd.keyHeadDim());
        z.put("valueHeadDim", gd.valueHeadDim());
        z.put("convKernel", gd.convKernel());
        z.put("chunk", gd.chunk());
      }
      io.meshplan.model.Mamba1Shape m1 = hp.mamba1();
      if (m1 != null) {
        ObjectNode z = y.putObject("mamba1");
        z.put("inner", m1.inner());
        z.put("state", m1.state());
        z.put("convKernel", m1.convKernel());
        z.put("dtRank", m1.dtRank());
        z.put("convBias", m1.convBias());
        z.put("projBias", m1.projBias());
        z.put("innerNorms", m1.innerNorms());
      }
      if (hp.attentionGate()) {
        y.put("attentionGate", true);
      }
    }
    return o;
  }

  /**
   * Reads a hybrid model's layer pattern and Mamba-2 mixer; an ordinary decoder, and a plan from
   * before hybrids, has none.
   */
  private static io.meshplan.model.HybridPattern readHybrid(Fields a, int layers) {
    if (!a.has("hybrid")) {
      return io.meshplan.model.HybridPattern.NONE;
    }
    Fields y = a.object("hybrid").only(HYBRID);
    io.meshplan.model.MambaShape mamba = null;
    if (y.has("mamba")) {
      Fields z = y.object("mamba").only(MAMBA);
      mamba = new io.meshplan.model.MambaShape(z.integer("heads"), z.integer("headDim"),
          z.integer("state"), z.integer("groups"), z.integer("convKernel"), z.integer("chunk"),
          z.integer("normGroups"), z.bool("convBias"), z.bool("projBias"));
    }
    io.meshplan.model.GdnShape gdn = null;
    if (y.has("gatedDeltaNet")) {
      Fields z = y.object("gatedDeltaNet").only(GATED_DELTA_NET);
      gdn = new io.meshplan.model.GdnShape(z.integer("keyHeads"), z.integer("valueHeads"),
          z.integer("keyHeadDim"), z.integer("valueHeadDim"), z.integer("convKernel"),
          z.integer("chunk"));
    }
    io.meshplan.model.Mamba1Shape mamba1 = null;
    if (y.has("mamba1")) {
      Fields z = y.object("mamba1").only(MAMBA1);
      mamba1 = new io.meshplan.model.Mamba1Shape(z.integer("inner"), z.integer("state"),
          z.integer("convKernel"), z.integer("dtRank"), z.bool("convBias"), z.bool("projBias"),
          z.bool("innerNorms"));
    }
    String pattern = y.text("pattern");
    if (mamba != null && pattern.indexOf(io.meshplan.model.HybridPattern.MAMBA) < 0
        || gdn != null && pattern.indexOf(io.meshplan.model.HybridPattern.GDN) < 0
        || mamba1 != null && pattern.indexOf(io.meshplan.model.HybridPattern.SELECTIVE) < 0) {
      throw new InputException(y.where() + ": a mixer is given for layers the pattern does not "
          + "have (mamba needs M layers, mamba1 S layers, gatedDeltaNet G layers)");
    }
    try {
      io.meshplan.model.HybridPattern hp = io.meshplan.model.HybridPattern.parse(pattern, layers,
          mamba, gdn, y.has("attentionGate") && y.bool("attentionGate"), mamba1);
      return y.has("mtpPattern") ? hp.withMtp(y.text("mtpPattern")) : hp;
    } catch (InputException e) {
      throw new InputException(y.where() + ": " + e.getMessage());
    }
  }

  /** Writes the attention details of a Hugging Face family's model. */
  private static void attention(ObjectNode t, AttentionShape s) {
    t.put("headDim", s.headDim());
    t.put("qkvBias", s.qkvBias());
    t.put("qkNorm", s.qkNorm().name().toLowerCase(java.util.Locale.ROOT));
    t.put("blockNorms", s.blockNorms());
    t.put("attentionSoftcap", s.attentionSoftcap());
    t.put("finalSoftcap", s.finalSoftcap());
    t.put("window", s.window());
    t.put("globalEvery", s.globalEvery());
    t.put("windowFrom", s.windowFrom());
    if (s.sinks()) {
      t.put("sinks", true);
    }
    if (s.chunked()) {
      t.put("chunked", true);
    }
    if (s.mla().on()) {
      ObjectNode l = t.putObject("mla");
      l.put("qLoraRank", s.mla().qLoraRank());
      l.put("kvLoraRank", s.mla().kvLoraRank());
      l.put("qkNopeHeadDim", s.mla().nopeDim());
      l.put("qkRopeHeadDim", s.mla().ropeDim());
      l.put("vHeadDim", s.mla().valueDim());
    }
  }

  /** Reads a model's experts; a dense model, and a plan from before experts, has none. */
  private static MoeShape readMoe(Fields a) {
    if (!a.has("moe")) {
      return MoeShape.DENSE;
    }
    Fields x = a.object("moe").only(MOE);
    MoeShape moe = new MoeShape(x.integer("experts"), x.integer("expertsPerToken"),
        x.integer("expertFfn"), x.integer("sharedExpertFfn"), x.bool("expertBiases"));
    if (x.has("denseLayers")) {
      moe = moe.withDenseLayers(x.integers("denseLayers", ModelSpec.MAX_LAYERS),
          x.integer("denseFfn"));
    }
    moe = x.has("routerGroups") ? moe.withGroupLimit(x.integer("routerGroups"),
        x.integer("routerGroupTopK")) : moe;
    moe = x.has("sharedExpertGate") && x.bool("sharedExpertGate") ? moe.withSharedGate() : moe;
    return x.has("latentWidth") ? moe.withLatent(x.integer("latentWidth")) : moe;
  }

  /** Reads the attention details a model of a Hugging Face family has; plain when absent. */
  private static AttentionShape readAttention(String where, Fields a) {
    if (!a.has("attention")) {
      return AttentionShape.PLAIN;
    }
    Fields t = a.object("attention").only(ATTENTION);
    return new AttentionShape(t.integer("headDim"), t.bool("qkvBias"),
        enumOf(where, "qkNorm", AttentionShape.QkNorm.class, t.text("qkNorm")),
        t.integer("blockNorms"), t.number("attentionSoftcap"), t.number("finalSoftcap"),
        t.integer("window"), t.integer("globalEvery"), t.integer("windowFrom"),
        t.has("sinks") && t.bool("sinks"), t.has("mla") ? readMla(t.object("mla"))
            : io.meshplan.model.Mla.NONE, t.has("chunked") && t.bool("chunked"));
  }

  private static io.meshplan.model.Mla readMla(Fields l) {
    l.only(MLA);
    return new io.meshplan.model.Mla(l.integer("qLoraRank"), l.integer("kvLoraRank"),
        l.integer("qkNopeHeadDim"), l.integer("qkRopeHeadDim"), l.integer("vHeadDim"));
  }

  /**
   * Reads a plan.
   *
   * @param where the file name, for messages
   * @param text the JSON text
   * @return the plan
   * @throws InputException naming the file and the field that is missing or wrong
   */
  public static PipelinePlan read(String where, String text) {
    JsonNode root = tree(where, text);
    Fields f = new Fields(where, root);
    checkVersion(where, f);
    if (f.has("source")) {
      return readModule(where, f.only(MODULE_TOP), root);
    }
    f.only(TOP);
    ModelSpec model = readModel(where, f.object("model"));
    checkDerived(where, f, model);
    PlanFileCheck.structure(where, root, false, model.layers());
    List<StagePlan> stages = readStages(where, root.get("stages"), false);
    // Required, as every field the prices depend on: a plan without it was priced unfused, a
    // kernel it may never have been planned with.
    String attentionName = f.text("attention");
    Attention attention;
    try {
      attention = Attention.parse(attentionName);
    } catch (IllegalArgumentException e) {
      throw new InputException(where + ": attention: " + e.getMessage());
    }
    io.meshplan.cluster.AttentionKernel kernel = null;
    if (f.has("attentionKernel")) {
      // The field's own refusal names the file; only the kernel's parse is prefixed here.
      String named = f.text("attentionKernel");
      try {
        kernel = io.meshplan.cluster.AttentionKernel.parse(named);
      } catch (InputException e) {
        throw new InputException(where + ": attentionKernel: " + e.getMessage());
      }
    }
    Overlaps overlaps = f.has("overlaps") ? readOverlaps(f.object("overlaps")) : Overlaps.NONE;
    if (overlaps.tensorComm() && stages.stream().noneMatch(StagePlan::sequenceParallel)) {
      // As the flags: Transformer Engine overlaps tensor-parallel communication with sequence
      // parallelism only (--tp-comm-overlap needs --sequence-parallel).
      throw new InputException(where + ": overlaps: 'tensorComm' is true, but no stage runs "
          + "sequence parallelism, which the tensor-parallel overlap needs, as in Megatron-LM");
    }
    if (overlaps.bf16GradReduce() && !Overlaps.bf16GradReduceRuns(model.dtype())) {
      throw new InputException(where + ": overlaps: 'bf16GradReduce' is true, but the model "
          + "trains in " + io.meshplan.model.Fp8Training.word(model.dtype())
          + "; gradients reduce in bf16 only under bf16 (or fp8) training");
    }
    derivedBytesPerGpu(f);
    PipelinePlan plan;
    try {
      plan = new PipelinePlan(new PlanSource.Preset(model, attention, overlaps, kernel), f.text("cluster"), f.integer("globalBatch"),
          f.integer("microbatchSequences"), f.integer("microbatches"), f.integer("virtualStages"),
          stages,
          new PipelinePlan.Prediction(f.number("iterationSeconds"), f.number("tokensPerSecond"),
              f.number("tflopsPerGpu"), f.number("mfu"), f.number("peakMemoryBytesPerGpu"),
              axisBytes(f, "communicationBytes")));
    } catch (IllegalArgumentException e) {
      throw new InputException(where + ": " + e.getMessage());
    }
    figures(where, plan.prediction());
    return plan;
  }

  /**
   * The largest MFU a plan may predict: MFU is stated against the 16-bit dense peak, which FP8
   * and FP4 GEMMs run past, at most 4 times (FP4 on Blackwell).
   */
  static final double MAX_MFU = 4;

  /** The longest iteration a plan may predict: a million seconds, some eleven days. */
  static final double MAX_ITERATION_SECONDS = 1e6;

  /** The shortest iteration a plan may predict: a microsecond, a few kernel launches. */
  static final double MIN_ITERATION_SECONDS = 1e-6;

  /**
   * Refuses a prediction whose figures no simulation gives, which commands that show a plan's
   * figures without simulating it again (replan, which derives its throughput from the
   * iteration) would print: an iteration shorter than {@link #MIN_ITERATION_SECONDS} or longer
   * than {@link #MAX_ITERATION_SECONDS}, and an MFU above {@link #MAX_MFU}.
   *
   * @param where the plan, for messages
   * @param p its prediction
   */
  private static void figures(String where, PipelinePlan.Prediction p) {
    double t = p.iterationSeconds();
    if (!(t >= MIN_ITERATION_SECONDS && t <= MAX_ITERATION_SECONDS)) {
      throw new InputException(where + ": iterationSeconds " + t + " is not "
          + MIN_ITERATION_SECONDS + " to " + MAX_ITERATION_SECONDS + " s, which no simulation "
          + "predicts; plan again");
    }
    if (!(p.mfu() <= MAX_MFU)) {
      throw new InputException(where + ": mfu " + p.mfu() + " is above " + MAX_MFU + ": past "
          + "even FP4's peak over the 16-bit one that MFU is stated against; plan again");
    }
  }

  /** Reads a model plan's overlaps; a plan from before they were modelled has none. */
  private static Overlaps readOverlaps(Fields o) {
    o.only(OVERLAPS);
    boolean gradReduce = o.bool("gradReduce");
    boolean paramGather = o.bool("paramGather");
    if (paramGather && !gradReduce) {
      throw new InputException(o.where() + ": 'paramGather' is true but 'gradReduce' is false;"
          + " the parameter gather overlaps only with the gradient reduction overlapped");
    }
    return new Overlaps(gradReduce, paramGather, o.bool("tensorComm"), o.bool("fsdpPrefetch"),
        o.bool("gradAccumFusion"), o.has("moeComm") && o.bool("moeComm"),
        o.has("lossFusion") && o.bool("lossFusion"),
        o.has("bf16GradReduce") && o.bool("bf16GradReduce"),
        o.has("moeDispatcher") ? dispatcher(o.where(), o.text("moeDispatcher"))
            : io.meshplan.model.ExpertDispatcher.ALLTOALL,
        o.has("hsdpStepReduce") && o.bool("hsdpStepReduce"));
  }

  /** Reads a dispatcher's name. */
  private static io.meshplan.model.ExpertDispatcher dispatcher(String where, String word) {
    return io.meshplan.model.ExpertDispatcher.of(word).orElseThrow(() -> new InputException(
        where + ": 'moeDispatcher' must be one of " + io.meshplan.model.ExpertDispatcher.words()
        + ", got '" + word + "'"));
  }

  /** Reads the plan of an HLO module ({@link #writeModule}). */
  private static PipelinePlan readModule(String where, Fields f, JsonNode root) {
    Fields source = f.object("source");
    if (!HLO_KIND.equals(source.text("kind"))) {
      throw new InputException(where + ": field 'source.kind' is '" + source.text("kind")
          + "'; expected '" + HLO_KIND + "'");
    }
    JsonNode names = f.get("layerNames");
    if (!names.isArray() || names.size() > MAX_LAYER_NAMES) {
      throw new InputException(where + ": field 'layerNames' must be an array of at most "
          + MAX_LAYER_NAMES + " strings");
    }
    List<String> layerNames = new ArrayList<>();
    for (JsonNode n : names) {
      if (!n.isTextual()) {
        throw new InputException(where + ": field 'layerNames' must hold strings");
      }
      layerNames.add(n.asText());
    }
    PlanFileCheck.structure(where, root, true, layerNames.size());
    List<StagePlan> stages = readStages(where, root.get("stages"), true);
    int microbatches = f.integer("microbatches");
    derivedBytesPerGpu(f);
    try {
      PlanSource.HloModule module = new PlanSource.HloModule(f.text("module"),
          source.text("path"), source.text("sha256"), layerNames);
      PipelinePlan plan = new PipelinePlan(module, f.text("cluster"), microbatches, 1,
          microbatches, 1, stages, new PipelinePlan.Prediction(f.number("iterationSeconds"),
              f.number("microbatchesPerSecond"), f.number("tflopsPerGpu"), f.number("mfu"),
              f.number("peakMemoryBytesPerGpu"), axisBytes(f, "communicationBytes")));
      figures(where, plan.prediction());
      return plan;
    } catch (IllegalArgumentException e) {
      throw new InputException(where + ": " + e.getMessage());
    }
  }

  /** The JSON object of a plan file. */
  private static JsonNode tree(String where, String text) {
    JsonNode root;
    try {
      root = TreeReaders.json().readTree(text);
    } catch (JsonProcessingException e) {
      throw new InputException(where + ": not a JSON plan file (" + JsonErrors.describe(e)
          + ")");
    }
    if (root == null || !root.isObject()) {
      throw new InputException(where + ": not a JSON plan file (expected an object)");
    }
    return root;
  }

  /** Checks {@code format} and {@code version}. */
  private static void checkVersion(String where, Fields f) {
    if (!FORMAT.equals(f.text("format"))) {
      throw new InputException(where + ": field 'format' is '" + f.text("format")
          + "', expected '" + FORMAT + "' (write plans with 'meshplan plan --out')");
    }
    int version = f.integer("version");
    if (version != VERSION) {
      throw new InputException(where + ": plan format version " + version + " is not supported;"
          + " this meshplan reads version " + VERSION + " (re-run 'meshplan plan --out')");
    }
  }

  private static ModelSpec readModel(String where, Fields m) {
    try {
      m.only(MODEL);
      Fields a = m.object("architecture").only(ARCHITECTURE);
      ModelSpec.Family family = enumOf(where, "model.family", ModelSpec.Family.class,
          m.text("family"));
      Architecture arch = new Architecture(
          enumOf(where, "model.architecture.mlp", Architecture.Mlp.class, a.text("mlp")),
          enumOf(where, "model.architecture.norm", Architecture.Norm.class, a.text("norm")),
          enumOf(where, "model.architecture.positions", Architecture.Positions.class,
              a.text("positions")),
          a.integer("positionRows"), a.bool("biases"), a.bool("tiedEmbeddings"),
          readAttention(where, a), readMoe(a), 0,
          NumericsJson.read(a.where(), a.node(), m.text("name"), family))
          .withHybrid(readHybrid(a, m.integer("layers")),
              a.has("mtpLayers") ? a.integer("mtpLayers") : 0)
          .withMtpShared(a.has("mtpShared") && a.bool("mtpShared"));
      io.meshplan.model.Lora lora = m.has("lora") ? readLora(m.object("lora"),
          arch.mlp().gated()) : io.meshplan.model.Lora.NONE;
      DType dtype = dtype(where, m.text("dtype"));
      if (lora.fp8Base() && !io.meshplan.model.Fp8Training.on(dtype)) {
        throw new InputException(where + ": model.lora.base: is 'fp8', but model.dtype is '"
            + m.text("dtype") + "', not fp8");
      }
      if (m.has("fp8ParamGather") && m.bool("fp8ParamGather")) {
        if (lora.on()) {
          throw new InputException(where + ": model.fp8ParamGather: is for full training; a "
              + "LoRA run states its FP8 base as model.lora.base");
        }
        if (!io.meshplan.model.Fp8Training.on(dtype)) {
          throw new InputException(where + ": model.fp8ParamGather: is true, but model.dtype is '"
              + m.text("dtype") + "', not fp8");
        }
        if (optimizerState(where, m) == io.meshplan.model.OptimizerState.BF16) {
          throw new InputException(where + ": model.fp8ParamGather: is true, but "
              + "model.optimizerState is 'bf16', which keeps no fp32 master for FP8 weights");
        }
        lora = io.meshplan.model.Lora.FP8_WEIGHTS;
      }
      return new ModelSpec(m.text("name"), family, m.integer("layers"), m.integer("hidden"), m.integer("heads"),
          m.integer("kvHeads"), m.integer("ffn"), m.integer("vocab"), m.integer("seq"), 1,
          dtype, arch,
          m.has("packing") ? readPacking(m.object("packing")) : io.meshplan.model.Packing.NONE,
          lora, fp8Scaling(where, m), optimizerState(where, m),
          m.has("fp8ActivationInput") && m.bool("fp8ActivationInput"));
    } catch (IllegalArgumentException e) {
      throw new InputException(where + ": field 'model': " + e.getMessage());
    }
  }

  /**
   * A model's LoRA adapters as its JSON holds them: rank, alpha, targets and the trained
   * parameters (the adapters alone; the frozen weights are the model's {@code parameters}).
   */
  private static ObjectNode loraNode(ModelSpec m) {
    ObjectNode lo = MAPPER.createObjectNode();
    lo.put("rank", m.lora().rank());
    lo.put("alpha", m.lora().alpha());
    lo.put("targets", m.lora().targets());
    if (m.lora().base() != io.meshplan.model.Lora.Base.TRAINING) {
      lo.put("base", m.lora().base().word());
    }
    lo.put("trainableParameters", m.trainableParameterCount());
    return lo;
  }

  /**
   * The {@code finetune} summary a plan's JSON carries beside its model: the mode, LoRA's rank,
   * alpha and targets, the trained and frozen parameter counts, and whether full training keeps
   * its weights in FP8 ({@code fp8ParamGather}), all derived from the model.
   *
   * @param m the model
   * @return the summary
   */
  public static ObjectNode finetuneSummary(ModelSpec m) {
    ObjectNode f = MAPPER.createObjectNode();
    f.put("mode", m.lora().quantized() ? "qlora" : m.lora().on() ? "lora" : "full");
    if (m.lora().on()) {
      f.put("rank", m.lora().rank());
      f.put("alpha", m.lora().alpha());
      f.put("targets", m.lora().targets());
    }
    f.put("trainableParameters", m.trainableParameterCount());
    f.put("frozenParameters", m.lora().on() ? m.parameterCount() : 0);
    if (m.lora().fp8Weights()) {
      f.put("fp8ParamGather", true);
    }
    return f;
  }

  /**
   * The summaries a plan's JSON derives from its model ({@code finetune}, and {@code
   * model.lora.trainableParameters}): every field given must be what the model makes it.
   */
  private static void checkDerived(String where, Fields f, ModelSpec model) {
    if (f.has("finetune")) {
      agrees(where, "finetune", f.object("finetune").only(FINETUNE).node(),
          finetuneSummary(model), model);
    }
    JsonNode lora = f.node().path("model").path("lora");
    if (model.lora().on() && lora.isObject()) {
      agrees(where, "model.lora", lora, loraNode(model), model);
    }
    // The parameter count the writer derived from the model: a file whose layers or mixers were
    // edited, or whose count was, is refused rather than read as a model of another size.
    JsonNode params = f.node().path("model").path("parameters");
    if (!params.isMissingNode() && !(params.isIntegralNumber()
        && params.decimalValue().compareTo(java.math.BigDecimal.valueOf(model.parameterCount()))
        == 0)) {
      throw new InputException(where + ": field 'model.parameters' is " + shown(params)
          + " but the model's fields make it " + model.parameterCount());
    }
  }

  /**
   * Refuses the first field of {@code given} that {@code derived} holds with another value:
   * numbers by value, LoRA targets by the adapters they name (so {@code all-linear} agrees with
   * its projections), the rest as written.
   */
  private static void agrees(String where, String field, JsonNode given, ObjectNode derived,
      ModelSpec model) {
    for (var e : derived.properties()) {
      JsonNode g = given.get(e.getKey());
      JsonNode d = e.getValue();
      if (g == null || (g.isNumber() && d.isNumber()
          ? g.decimalValue().compareTo(d.decimalValue()) == 0
          : e.getKey().equals("targets") ? sameTargets(g, model) : g.equals(d))) {
        continue;
      }
      // A full training plan has no model.lora: its summary follows from the model's fields.
      throw new InputException(where + ": field '" + field + "." + e.getKey() + "' is "
          + shown(g) + (model.lora().on() ? " but model.lora makes it "
          : " but the model's fields make it ") + shown(d));
    }
  }

  private static boolean sameTargets(JsonNode given, ModelSpec model) {
    try {
      return given.isTextual() && io.meshplan.model.Lora.of(1, 1, given.asText(),
          model.arch().mlp().gated()).targets().equals(model.lora().targets());
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private static String shown(JsonNode n) {
    return n.isTextual()
        ? "'" + io.meshplan.util.TerminalText.escape(io.meshplan.util.Words.clipped(n.asText()))
            + "'"
        : io.meshplan.util.TerminalText.escape(io.meshplan.util.Words.clipped(n.toString()));
  }

  /**
   * Reads the LoRA adapters: {@code rank}, {@code alpha}, {@code targets} and {@code base}: {@code
   * nf4} for QLoRA, {@code fp8} for a base stored in FP8 (absent: the base in the training
   * precision).
   */
  private static io.meshplan.model.Lora readLora(Fields l, boolean gated) {
    l.only(LORA);
    io.meshplan.model.Lora lora = io.meshplan.model.Lora.of(l.integer("rank"),
        l.number("alpha"), l.text("targets"), gated);
    if (!l.has("base")) {
      return lora;
    }
    String base = l.text("base");
    return lora.withBase(io.meshplan.model.Lora.Base.parse(base).orElseThrow(() -> {
      String shown = io.meshplan.util.TerminalText.escape(io.meshplan.util.Words.clipped(base));
      return new IllegalArgumentException("field 'model.lora.base' must be nf4 (QLoRA's 4-bit "
          + "base) or fp8 (a base stored in FP8), got '" + shown + "'");
    }));
  }

  /** Reads the packed documents' histogram: {@code lengths} and their {@code counts}. */
  private static io.meshplan.model.Packing readPacking(Fields p) {
    p.only(PACKING);
    List<Integer> lengths = p.integers("lengths", io.meshplan.model.Packing.MAX_LENGTHS);
    if (lengths.isEmpty()) {
      throw new InputException(p.where() + ": field 'lengths' lists no document length (a plan "
          + "without packed documents has no 'packing')");
    }
    JsonNode counts = p.node().get("counts");
    if (counts == null || !counts.isArray() || counts.size() != lengths.size()) {
      throw new InputException(p.where() + ": field 'counts' must be a list of as many integers "
          + "as 'lengths'");
    }
    int[] l = new int[lengths.size()];
    long[] c = new long[lengths.size()];
    for (int i = 0; i < l.length; i++) {
      JsonNode n = counts.get(i);
      if (!n.isIntegralNumber() || !n.canConvertToLong()) {
        throw new InputException(p.where() + ": field 'counts' must hold integers, got " + n);
      }
      l[i] = lengths.get(i);
      c[i] = n.longValue();
    }
    try {
      return new io.meshplan.model.Packing(l, c);
    } catch (IllegalArgumentException e) {
      throw new InputException(p.where() + ": " + e.getMessage(), e);
    }
  }

  private static List<StagePlan> readStages(String where, JsonNode arr, boolean module) {
    if (arr == null || !arr.isArray()) {
      throw new InputException(where + ": field 'stages' is missing or not an array");
    }
    List<StagePlan> stages = new ArrayList<>();
    for (int i = 0; i < arr.size(); i++) {
      stages.add(readStage(where + ": stages[" + i + "]", arr.get(i), module));
    }
    return stages;
  }

  /**
   * Reads one element of {@code stages}.
   *
   * @param where the file name and the stage's index, for messages
   * @param module whether the stage is one of an HLO module's plan, which fixes the settings
   */
  private static StagePlan readStage(String where, JsonNode node, boolean module) {
    Fields s = new Fields(where, node).only(module ? MODULE_STAGE : STAGE);
    int[] layers = s.pair("layers");
    int[] sub = s.pair("submesh");
    int[] lm = s.pair("logicalMesh");
    List<TensorSharding> ts = readTensors(where, node.get("tensors"));
    StagePlan read;
    try {
      read = new StagePlan(layers[0], layers[1], sub[0], sub[1], s.integer("firstDevice"),
          lm[0], lm[1], module ? Recompute.NONE : Recompute.parse(s.text("recompute")),
          !module && s.bool("sequenceParallel"), module ? 0 : s.integer("zeroStage"),
          !module && layouts(where, s.text("layouts")),
          s.number("forwardSeconds"), s.number("backwardSeconds"),
          s.number("peakMemoryBytes"), ts, axisBytes(s, "communicationBytesPerGpu"),
          s.has("expertParallel") ? s.integer("expertParallel") : 1,
          s.has("expertTensorParallel") ? s.integer("expertTensorParallel") : 1,
          s.has("contextParallel") ? s.integer("contextParallel") : 1,
          s.has("cpCommType") ? cpExchange(where, s.text("cpCommType")) : ContextExchange.P2P,
          s.has("shardGroup") ? s.integer("shardGroup") : 0,
          s.has("recomputeLayers") ? s.integer("recomputeLayers") : 0);
    } catch (IllegalArgumentException e) {
      throw new InputException(where + ": " + e.getMessage());
    }
    if (read.sequenceParallel() && read.tensorParallel() == 1) {
      // Named here, by the file and stage, where the simulator would only say 'stage 0'.
      throw new InputException(where + ": sequenceParallel is true with a tensor-parallel size "
          + "of 1; sequence parallelism splits a tensor-parallel group's activations");
    }
    return read;
  }

  /** Reads {@code cpCommType}: {@code p2p}, {@code all_gather} or {@code a2a}. */
  private static ContextExchange cpExchange(String where, String type) {
    return ContextExchange.ofWord(type).orElseThrow(() -> new InputException(where
        + ": cpCommType '" + io.meshplan.util.TerminalText.escape(type)
        + "' is unknown; use p2p, all_gather or a2a"));
  }

  /** Reads the optional field {@code tensors} that {@link #putTensors} writes. */
  private static List<TensorSharding> readTensors(String where, JsonNode tarr) {
    List<TensorSharding> ts = new ArrayList<>();
    if (tarr != null && tarr.isArray()) {
      for (int k = 0; k < tarr.size(); k++) {
        Fields t = new Fields(where + ".tensors[" + k + "]", tarr.get(k)).only(TENSOR);
        ts.add(new TensorSharding(t.text("name"), t.text("shape"), t.text("sharding"),
            t.text("words")));
      }
    }
    return ts;
  }

  private static <E extends Enum<E>> E enumOf(String where, String field, Class<E> type,
      String name) {
    for (E e : type.getEnumConstants()) {
      if (e.name().equalsIgnoreCase(name)) {
        return e;
      }
    }
    throw new InputException(where + ": " + field + ": is '" + name + "'; expected one of "
        + java.util.Arrays.toString(type.getEnumConstants()).toLowerCase(java.util.Locale.ROOT));
  }

  /**
   * A plan's FP8 scaling: its {@code model.fp8Recipe}, which only an FP8 plan may carry; delayed
   * when absent (plans written before the field).
   */
  private static io.meshplan.model.Fp8Scaling fp8Scaling(String where, Fields m) {
    if (!m.has("fp8Recipe")) {
      return io.meshplan.model.Fp8Scaling.DELAYED;
    }
    String w = m.text("fp8Recipe");
    if (!io.meshplan.model.Fp8Training.on(dtype(where, m.text("dtype")))) {
      throw new InputException(where + ": model.fp8Recipe: is '" + w + "', but model.dtype is '"
          + m.text("dtype") + "', not fp8");
    }
    return io.meshplan.model.Fp8Scaling.parse(w).orElseThrow(() -> new InputException(where
        + ": model.fp8Recipe: is '" + w + "'; expected "
        + io.meshplan.model.Fp8Scaling.words()));
  }

  /**
   * A plan's optimizer-state precision: its {@code model.optimizerState}, fp32 when absent (plans
   * written before the field, and every fp32 plan, which leaves it out).
   */
  private static io.meshplan.model.OptimizerState optimizerState(String where, Fields m) {
    if (!m.has("optimizerState")) {
      return io.meshplan.model.OptimizerState.FP32;
    }
    String w = m.text("optimizerState");
    return io.meshplan.model.OptimizerState.parse(w).orElseThrow(() -> new InputException(where
        + ": model.optimizerState: is '" + w + "'; expected fp32 or bf16"));
  }

  private static DType dtype(String where, String name) {
    DType t = io.meshplan.model.Fp8Training.parse(name);
    if (t == null) {
      throw new InputException(where + ": model.dtype: is '" + name + "', not a type");
    }
    return t;
  }

  private static boolean layouts(String where, String text) {
    return switch (text) {
      case "megatron" -> true;
      case "ilp" -> false;
      default -> throw new InputException(where + ": field 'layouts' is '" + text
          + "'; expected megatron or ilp");
    };
  }

  /** Typed access to the fields of one JSON object, with messages naming the field. */
  private record Fields(String where, JsonNode node) {
    Fields {
      if (node == null || !node.isObject()) {
        throw new InputException(where + ": expected an object");
      }
    }

    boolean has(String name) {
      JsonNode v = node.get(name);
      return v != null && !v.isNull();
    }

    JsonNode get(String name) {
      JsonNode v = node.get(name);
      if (v == null || v.isNull()) {
        throw new InputException(where + ": field '" + name + "' is missing");
      }
      return v;
    }

    String text(String name) {
      JsonNode v = get(name);
      if (!v.isTextual()) {
        throw new InputException(where + ": field '" + name + "' must be a string");
      }
      return v.asText();
    }

    int integer(String name) {
      JsonNode v = get(name);
      if (!v.isIntegralNumber() || !v.canConvertToInt()) {
        throw new InputException(where + ": field '" + name + "' must be a 32-bit integer, got "
            + v);
      }
      return v.intValue();
    }

    double number(String name) {
      JsonNode v = get(name);
      if (!v.isNumber() || !Double.isFinite(v.doubleValue())) {
        throw new InputException(where + ": field '" + name + "' must be a finite number, got "
            + v);
      }
      return v.doubleValue();
    }

    boolean bool(String name) {
      JsonNode v = get(name);
      if (!v.isBoolean()) {
        throw new InputException(where + ": field '" + name + "' must be true or false");
      }
      return v.booleanValue();
    }

    int[] pair(String name) {
      JsonNode v = get(name);
      if (!v.isArray() || v.size() != 2 || !v.get(0).canConvertToInt()
          || !v.get(1).canConvertToInt() || !v.get(0).isIntegralNumber()
          || !v.get(1).isIntegralNumber()) {
        throw new InputException(where + ": field '" + name + "' must be two integers");
      }
      return new int[] {v.get(0).intValue(), v.get(1).intValue()};
    }

    /** A list of at most {@code max} integers. */
    List<Integer> integers(String name, int max) {
      JsonNode v = get(name);
      if (!v.isArray() || v.size() > max) {
        throw new InputException(where + ": field '" + name + "' must be a list of at most "
            + max + " integers");
      }
      List<Integer> out = new ArrayList<>(v.size());
      for (JsonNode e : v) {
        if (!e.isIntegralNumber() || !e.canConvertToInt()) {
          throw new InputException(where + ": field '" + name + "' must hold integers, got "
              + e);
        }
        out.add(e.intValue());
      }
      return out;
    }

    Fields object(String name) {
      return new Fields(where + ": " + name, get(name));
    }

    /**
     * Refuses a field this object never holds: a misspelt optional field ({@code
     * contextParalel}) would otherwise be dropped without a word, and the plan priced without what
     * the user wrote.
     *
     * @param known every field a plan's writer puts in this object
     * @return this
     */
    Fields only(java.util.Set<String> known) {
      io.meshplan.util.TreeReaders.requireKnownFields(where, node, known);
      return this;
    }
  }
}
