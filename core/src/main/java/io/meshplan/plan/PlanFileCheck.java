package io.meshplan.plan;

import com.fasterxml.jackson.databind.JsonNode;
import io.meshplan.model.Recompute;
import io.meshplan.util.InputException;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Checks a plan file as fully as the planner builds a plan, before it becomes a {@link
 * PipelinePlan}, and names the first violation by its JSON path ({@code plan.json:
 * stages[1].firstDevice: ...}): every count is an integer (not {@code 2.5}, not {@code "2"}) in
 * range, every enumeration known, the schedule agrees with the virtual stages, the microbatches
 * make up the global batch and split over each stage's replicas, each stage's stated {@code
 * microBatch} is the one that split gives, the layers are contiguous from 0 and cover the model,
 * each logical mesh fills its submesh, and the chunks of an interleaved plan sit on their stage's
 * devices. {@link #devices} then checks that the stages tile a cluster.
 */
public final class PlanFileCheck {
  /** The schedules a plan file names: the 1F1B schedule, and its interleaved form. */
  public static final List<String> SCHEDULES = List.of("1f1b", "interleaved-1f1b");

  private PlanFileCheck() {}

  /**
   * Checks the structure of a plan file's JSON.
   *
   * @param file the file name, for messages
   * @param root the file's top-level object
   * @param module whether it is the plan of an HLO module
   * @param layers the layers the model or module has
   * @throws InputException naming the first violation by its JSON path
   */
  static void structure(String file, JsonNode root, boolean module, int layers) {
    At top = new At(file, "", root);
    int microbatches = top.positive("microbatches");
    int sequences = module ? 1 : top.positive("microbatchSequences");
    int global = module ? microbatches : top.positive("globalBatch");
    int virtual = module ? 1 : top.positive("virtualStages");
    String schedule = top.oneOf("schedule", SCHEDULES);
    if (schedule.equals("1f1b") != (virtual == 1)) {
      throw top.bad("schedule", "'" + schedule + "' does not go with virtualStages " + virtual
          + " (1f1b has 1 virtual stage per device group, interleaved-1f1b more)");
    }
    if ((long) sequences * microbatches != global) {
      throw top.bad("microbatches", microbatches + " microbatches of " + sequences
          + " sequences are not the global batch of " + global);
    }
    JsonNode arr = root.get("stages");
    if (arr == null || !arr.isArray() || arr.isEmpty()) {
      throw top.bad("stages", "must be a non-empty array of stages");
    }
    if (arr.size() % virtual != 0) {
      throw top.bad("stages", arr.size() + " model chunks do not split into " + virtual
          + " chunks per device group");
    }
    int depth = arr.size() / virtual;
    if (virtual > 1 && microbatches % depth != 0) {
      throw top.bad("microbatches", "must be a multiple of the pipeline depth (" + depth
          + ") under the interleaved schedule, got " + microbatches);
    }
    long next = 0;
    for (int k = 0; k < arr.size(); k++) {
      At s = new At(file, "stages[" + k + "]", arr.get(k));
      next = stage(s, next, module, sequences);
      if (virtual > 1) {
        chunk(s, new At(file, "stages[" + k % depth + "]", arr.get(k % depth)), k, depth);
      }
    }
    if (next != layers) {
      throw new At(file, "stages[" + (arr.size() - 1) + "]", arr.get(arr.size() - 1))
          .bad("layers", "the stages cover layers 0 to " + (next - 1) + ", but the "
              + (module ? "module" : "model") + " has " + layers + " layers");
    }
    int gpus = top.positive("gpus");
    long used = 0;
    for (int k = 0; k < depth; k++) {
      int[] sub = new At(file, "stages[" + k + "]", arr.get(k)).positivePair("submesh");
      used += (long) sub[0] * sub[1];
    }
    if (used != gpus) {
      throw top.bad("gpus", gpus + ", but the stages' submeshes hold " + used + " GPUs");
    }
  }

  /** Checks one stage and returns the layer after its last. */
  private static long stage(At s, long next, boolean module, int sequences) {
    int[] layers = s.pair("layers");
    if (layers[0] != next) {
      throw s.bad("layers", "[" + layers[0] + ", " + layers[1] + "] must start at layer " + next
          + ", where the stage before ends (stages cover the layers in order, without gaps or"
          + " overlap)");
    }
    if (layers[1] < layers[0]) {
      throw s.bad("layers", "[" + layers[0] + ", " + layers[1] + "] is not a range of layers");
    }
    int[] sub = s.positivePair("submesh");
    s.nonNegative("firstDevice");
    int[] mesh = s.positivePair("logicalMesh");
    // Each data-parallel replica is contextParallel x tensorParallel GPUs (StagePlan).
    long cp = s.has("contextParallel") ? s.positive("contextParallel") : 1;
    if ((long) mesh[0] * mesh[1] * cp != (long) sub[0] * sub[1]) {
      throw s.bad("logicalMesh", mesh[0] + "x" + mesh[1] + (cp > 1 ? " with context-parallel"
          + " size " + cp : "") + " does not fill the submesh " + sub[0] + "x" + sub[1]);
    }
    if (!module) {
      if (sequences % mesh[0] != 0) {
        throw s.bad("logicalMesh", "a microbatch of " + sequences + " sequences does not split"
            + " over " + mesh[0] + " data-parallel replicas");
      }
      if (s.has("microBatch")) {
        int mb = s.positive("microBatch");
        if (mb != sequences / mesh[0]) {
          throw s.bad("microBatch", mb + ", but a microbatch of " + sequences + " sequences"
              + " over " + mesh[0] + " replicas gives " + sequences / mesh[0] + " each");
        }
      }
      String recompute = s.oneOf("recompute",
          Arrays.stream(Recompute.values()).map(Recompute::label).toList());
      if (s.has("recomputeLayers")) {
        // Megatron-Core's block method: the first blocks of the stage recomputed, the rest kept.
        int k = s.positive("recomputeLayers");
        if (!recompute.equals(Recompute.FULL.label())) {
          throw s.bad("recomputeLayers", k + " recomputed blocks need recompute \"full\", got \""
              + recompute + "\"");
        }
        long blocks = (long) layers[1] - layers[0] + 1;
        if (k >= blocks) {
          throw s.bad("recomputeLayers", k + " must be fewer than the stage's " + blocks
              + " blocks (leave it out to recompute them all)");
        }
      }
      s.oneOf("layouts", List.of("megatron", "ilp"));
      int zero = s.nonNegative("zeroStage");
      if (zero > 3) {
        throw s.bad("zeroStage", "must be 0, 1, 2 or 3, got " + zero);
      }
    }
    return (long) layers[1] + 1;
  }

  /** Checks that model chunk {@code k} names and sits on the devices of its device group. */
  private static void chunk(At c, At group, int k, int depth) {
    if (c.has("stage") && c.nonNegative("stage") != k % depth) {
      throw c.bad("stage", "model chunk " + k + " runs on device group " + k % depth);
    }
    if (c.has("chunk") && c.nonNegative("chunk") != k / depth) {
      throw c.bad("chunk", "model chunk " + k + " is chunk " + k / depth + " of its group");
    }
    for (String f : List.of("firstDevice", "submesh", "logicalMesh")) {
      if (!c.node().get(f).equals(group.node().get(f))) {
        throw c.bad(f, "model chunk " + k + " must run on the devices and logical mesh of "
            + group.path() + " (" + group.node().get(f) + "), got " + c.node().get(f));
      }
    }
  }

  /**
   * Checks that a plan's device groups tile a cluster: each group's GPUs ({@code firstDevice} to
   * {@code firstDevice + devices - 1}, as the planner numbers them, row-major over nodes) lie on
   * the cluster, inside one node or on whole nodes, no two groups share a GPU, and together they
   * use every GPU. Sums are taken in
   * {@code long}, so a {@code firstDevice} near 2^31 cannot wrap.
   *
   * @param file the file name, for messages
   * @param plan the plan, whose stage {@code k} is {@code stages[k]} of the file
   * @param nodes the cluster's nodes
   * @param gpusPerNode the cluster's GPUs per node
   * @param cluster the cluster's name, for messages
   * @throws InputException naming the first stage that breaks the tiling
   */
  public static void devices(String file, PipelinePlan plan, int nodes, int gpusPerNode,
      String cluster) {
    if (plan.source() instanceof PlanSource.Preset) {
      for (int k = 0; k < plan.stages().size(); k++) {
        expertsAndContext(file + ": stages[" + k + "].", plan, plan.stages().get(k));
      }
    }
    long total = (long) nodes * gpusPerNode;
    int depth = plan.pipelineStages();
    Integer[] order = new Integer[depth];
    for (int k = 0; k < depth; k++) {
      StagePlan s = plan.stages().get(k);
      String at = file + ": stages[" + k + "].";
      if (s.submeshNodes() > nodes || s.submeshGpus() > gpusPerNode) {
        throw new InputException(at + "submesh: " + s.submeshNodes() + "x" + s.submeshGpus()
            + " does not fit on the " + nodes + "x" + gpusPerNode + " GPUs of " + cluster);
      }
      long end = (long) s.firstDevice() + s.devices();
      if (end > total) {
        throw new InputException(at + "firstDevice: " + s.firstDevice() + ", so the stage's "
            + s.devices() + " GPUs end at device " + (end - 1) + ", beyond the last device "
            + (total - 1) + " of " + cluster);
      }
      inNodes(at, s, gpusPerNode, cluster);
      order[k] = k;
    }
    List<StagePlan> st = plan.stages();
    Arrays.sort(order, Comparator.comparingInt((Integer k) -> st.get(k).firstDevice())
        .thenComparingInt(k -> k));
    long covered = 0;
    for (int k : order) {
      StagePlan s = st.get(k);
      if (s.firstDevice() < covered) {
        throw new InputException(file + ": stages[" + k + "].firstDevice: " + s.firstDevice()
            + " lies among the GPUs of another stage; stages must not share GPUs");
      }
      if (s.firstDevice() > covered) {
        throw new InputException(file + ": stages[" + k + "].firstDevice: " + s.firstDevice()
            + " leaves devices " + covered + " to " + (s.firstDevice() - 1) + " of " + cluster
            + " without a stage");
      }
      covered += s.devices();
    }
    if (covered != total) {
      throw new InputException(file + ": gpus: the stages use " + covered + " GPUs, but "
          + cluster + " has " + total + "; plan again for this cluster");
    }
  }

  /**
   * Refuses a stage whose GPUs cross a node they do not fill: a submesh of fewer than {@code M}
   * GPUs must lie inside one node and one of whole nodes must start on a node boundary, as the
   * planner places them and as a stage is priced (one node over NVLink, or whole nodes; Alpa's
   * runtime slices its cluster so, {@code get_sliced_virtual_submeshes}).
   */
  private static void inNodes(String at, StagePlan s, int gpusPerNode, String cluster) {
    long first = s.firstDevice();
    long last = first + s.devices() - 1;
    if (s.submeshNodes() > 1 && s.submeshGpus() < gpusPerNode) {
      throw new InputException(at + "submesh: " + s.submeshNodes() + "x" + s.submeshGpus()
          + " takes part of " + s.submeshNodes() + " nodes of " + cluster + "; a submesh of"
          + " several nodes uses all " + gpusPerNode + " GPUs of each");
    }
    boolean whole = s.submeshGpus() == gpusPerNode;
    if (whole ? first % gpusPerNode != 0 : first / gpusPerNode != last / gpusPerNode) {
      throw new InputException(at + "firstDevice: " + first + " puts the stage's "
          + s.submeshNodes() + "x" + s.submeshGpus() + " submesh on devices " + first + "-"
          + last + ", across nodes " + first / gpusPerNode + " to " + last / gpusPerNode
          + " of " + cluster + "; a submesh of fewer than " + gpusPerNode + " GPUs lies inside"
          + " one node and one of whole nodes starts at a multiple of " + gpusPerNode
          + " (plan again, or move the stages)");
    }
  }

  /**
   * Refuses a stage's expert or context-parallel layout, recomputation or unsharded optimizer
   * (beside FP8 weights) that its model cannot take, by the rules of {@code simulate}'s flags
   * ({@link ParallelConfig#checkExperts(io.meshplan.model.MoeShape, int, int, int, int, int,
   * boolean)}, {@link ParallelConfig#checkContext(int, int, boolean)}), named by the file's
   * fields.
   */
  private static void expertsAndContext(String at, PipelinePlan plan, StagePlan s) {
    try {
      ParallelConfig.checkExperts(plan.model().arch().moe(), s.expertParallel(),
          s.expertTensorParallel(), s.tensorParallel(), s.dataParallel(), s.contextParallel(),
          s.sequenceParallel());
    } catch (InputException e) {
      throw new InputException(at + "expertParallel: " + s.expertParallel()
          + ", expertTensorParallel: " + s.expertTensorParallel() + ": " + e.getMessage());
    }
    try {
      ParallelConfig.checkContext(s.contextParallel(), plan.model().seq(),
          plan.attention() == io.meshplan.model.Attention.FLASH);
      ParallelConfig.checkHeadSplit(s.cpExchange(), s.tensorParallel(), s.contextParallel(),
          plan.model().heads(), plan.model().kvHeads());
    } catch (InputException e) {
      throw new InputException(at + "contextParallel: " + s.contextParallel() + ": "
          + e.getMessage());
    }
    // Trained weights kept in FP8 (model.fp8ParamGather), by ParallelConfig#checkModel's rules.
    if (plan.model().lora().fp8Weights() && s.zeroStage() == 0) {
      throw new InputException(at + "zeroStage: 0: model.fp8ParamGather needs a sharded optimizer "
          + "(ZeRO stage 1-3), as in Megatron-LM");
    }
    if (plan.model().lora().fp8Weights()
        && plan.model().fp8Scaling() == io.meshplan.model.Fp8Scaling.NVFP4) {
      throw new InputException(at.substring(0, at.lastIndexOf("stages["))
          + "model.fp8ParamGather: under the nvfp4 recipe it is not modelled (Megatron-LM "
          + "gathers NVFP4 weights with --fp4-param-gather)");
    }
    try {
      io.meshplan.model.RecomputeModule.check(s.recompute(),
          io.meshplan.model.RecomputeModule.DEFAULT, plan.model());
      io.meshplan.model.MaxTextRemat.check(s.recompute(), plan.model());
    } catch (InputException e) {
      throw new InputException(at + "recompute: " + s.recompute().label() + ": "
          + e.getMessage());
    }
  }


  /** A JSON object at a path of a file, with typed reads that name the field by its path. */
  private record At(String file, String path, JsonNode node) {
    At {
      if (node == null || !node.isObject()) {
        throw new InputException(file + ": " + (path.isEmpty() ? "the plan" : path)
            + ": expected an object");
      }
    }

    InputException bad(String field, String why) {
      return new InputException(file + ": " + (path.isEmpty() ? "" : path + ".") + field + ": "
          + why);
    }

    boolean has(String field) {
      JsonNode v = node.get(field);
      return v != null && !v.isNull();
    }

    private JsonNode get(String field) {
      if (!has(field)) {
        throw bad(field, "the field is missing");
      }
      return node.get(field);
    }

    int integer(String field) {
      JsonNode v = get(field);
      if (!v.isIntegralNumber() || !v.canConvertToInt()) {
        throw bad(field, "must be a 32-bit integer, got " + v);
      }
      return v.intValue();
    }

    int nonNegative(String field) {
      int v = integer(field);
      if (v < 0) {
        throw bad(field, "must be 0 or more, got " + v);
      }
      return v;
    }

    int positive(String field) {
      int v = integer(field);
      if (v < 1) {
        throw bad(field, "must be 1 or more, got " + v);
      }
      return v;
    }

    String oneOf(String field, List<String> known) {
      JsonNode v = get(field);
      if (!v.isTextual() || !known.contains(v.asText())) {
        throw bad(field, "is " + v + "; expected one of " + String.join(", ", known));
      }
      return v.asText();
    }

    int[] pair(String field) {
      JsonNode v = get(field);
      if (!v.isArray() || v.size() != 2) {
        throw bad(field, "must be two integers, got " + v);
      }
      int[] out = new int[2];
      for (int i = 0; i < 2; i++) {
        JsonNode e = v.get(i);
        if (!e.isIntegralNumber() || !e.canConvertToInt() || e.intValue() < 0) {
          throw bad(field, "must be two integers of 0 or more, got " + v);
        }
        out[i] = e.intValue();
      }
      return out;
    }

    int[] positivePair(String field) {
      int[] p = pair(field);
      if (p[0] < 1 || p[1] < 1) {
        throw bad(field, "must be two integers of 1 or more, got [" + p[0] + ", " + p[1] + "]");
      }
      return p;
    }
  }
}
