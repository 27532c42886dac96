package io.meshplan.interop;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.interop.space.SearchRules;
import io.meshplan.interop.space.SearchSpace;
import io.meshplan.interop.space.SubmeshShape;
import io.meshplan.model.ModelSpec;
import io.meshplan.util.Units;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What the arithmetic of a request rules out before any layer is priced, so that a request no
 * plan can meet is answered at once rather than after every layer solve and stage DP:
 *
 * <ul>
 *   <li>Batch: a stage takes at most the largest tensor-parallel size times the largest
 *       context-parallel size times the global batch (one sequence per replica) GPUs, and a
 *       pipeline has at most one stage per layer ({@link #batch}).
 *   <li>Memory: every parameter's state is held by some GPU, at least 16 bytes of it (a 16-bit
 *       weight, a gradient of at least 2 bytes and Adam's fp32 master weight and two moments, 12
 *       bytes; in fp32 training a 4-byte weight, a 4-byte gradient and two 4-byte moments; 8
 *       bytes under bf16 optimizer state, {@link
 *       io.meshplan.model.OptimizerState#leastStateBytes}), so the GPUs hold at least {@code
 *       16 P / G} bytes each on average for P parameters on G GPUs, whatever the tensor,
 *       pipeline, data parallelism and ZeRO stage; and every GPU keeps the
 *       input of its stage's first layer for a microbatch in flight, at least {@code s h} elements
 *       of one sequence split over the largest tensor times context-parallel size ({@link
 *       #memory}).
 *   <li>Cover: a stage DP of microbatch size g uses only the submeshes on which some logical mesh
 *       gives each data-parallel replica 1, 2, 4 or 8 of the g sequences ({@link
 *       SearchRules#stageSettings}), and has at most one stage per (grouped) layer; when no
 *       multiset of at most that many such submeshes sums to the cluster's GPUs, the size cannot
 *       plan ({@link #coverable}). The interleaved search of a size runs only where its 1F1B
 *       search planned, and its pipelines of {@code p} equal groups of {@code v >= 2} chunks are
 *       such multisets too.
 * </ul>
 */
final class RequestBounds {
  private RequestBounds() {}

  /**
   * The request's verdict on memory alone: the model state spread over every GPU, and on each GPU
   * the input of one layer for one sequence, split as far as tensor and context parallelism go
   * (a stage keeps at least that for a microbatch in flight, even under full recomputation).
   *
   * @param req the request
   * @return why nothing fits, when those alone do not fit
   */
  static Optional<PlanResult.Infeasible> memory(PlanRequest req) {
    ModelSpec model = req.model();
    ClusterSpec c = req.cluster();
    double state = model.optimizerState().leastStateBytes() * model.parameterCount();
    int split = (int) Math.min(c.gpuCount(), (long) largestTensor(req) * largestContext(req));
    double input = (double) model.seq() * model.hidden() * req.weightBytes() / split;
    double perGpu = state / c.gpuCount() + input;
    double mem = req.memoryPerGpu();
    if (perGpu <= mem) {
      return Optional.empty();
    }
    String head = "no plan of " + model.name() + " fits on " + c.toShortString() + ": ";
    String sequence = "one sequence's input to a layer takes " + Units.formatBytes(input)
        + " per GPU even split over " + split + " GPUs by tensor and context parallelism";
    if (input >= mem) {
      return Optional.of(new PlanResult.Infeasible(perGpu, c.nodes(), head + sequence + ", and "
          + Units.formatBytes(mem) + " is available; train a shorter sequence"
          + ((long) largestTensor(req) * largestContext(req) > split ? ", or use more GPUs" : "")));
    }
    long nodes = Math.max((long) Math.ceil(state / ((mem - input) * c.gpusPerNode())),
        (long) c.nodes() + 1);
    int smallest = (int) Math.min(Integer.MAX_VALUE, nodes);
    return Optional.of(new PlanResult.Infeasible(perGpu, smallest, head + "the weights,"
        + " gradients and optimizer state of its " + model.parameterCount() + " parameters take"
        + " at least " + (int) model.optimizerState().leastStateBytes()
        + " bytes each, so even spread over all "
        + c.gpuCount() + " GPUs they need " + Units.formatBytes(state / c.gpuCount())
        + (input >= 0.01 * perGpu ? ", and " + sequence + ", " + Units.formatBytes(perGpu)
            + " in all" : "") + " per GPU, and " + Units.formatBytes(mem) + " is available; "
        + c.tryAtLeast(nodes)));
  }

  /** The largest tensor-parallel size: dividing a node's GPUs and the heads. */
  private static int largestTensor(PlanRequest req) {
    int m = req.cluster().gpusPerNode();
    int t = 1;
    for (int x = 1; x <= m; x++) {
      if (m % x == 0 && req.model().heads() % x == 0) {
        t = x;
      }
    }
    return t;
  }

  /** The largest context-parallel size the search allows for the sequence. */
  private static int largestContext(PlanRequest req) {
    List<Integer> cps = SearchRules.contextDegrees(req, Math.max(1, req.model().seq() / 2));
    return cps.get(cps.size() - 1);
  }

  /**
   * The request's verdict on its global batch alone: a stage's GPUs are its tensor-parallel size
   * (at most the largest that divides a node's GPUs and the heads) times its context-parallel size
   * (at most the largest that {@link SearchRules#contextDegrees} allows for the sequence) times its
   * data-parallel replicas, each of which takes at least one sequence of the global batch; and a
   * pipeline has at most one stage per layer.
   *
   * @param req the request
   * @return why no pipeline covers the cluster, when even that many GPUs fall short
   */
  static Optional<PlanResult.Infeasible> batch(PlanRequest req) {
    ModelSpec model = req.model();
    ClusterSpec c = req.cluster();
    int t = largestTensor(req);
    int cp = largestContext(req);
    long stage = (long) t * cp * req.globalBatch();
    long reach = stage * model.layers();
    if (reach >= c.gpuCount()) {
      return Optional.empty();
    }
    return Optional.of(tooFew(req, "its " + model.layers() + " layers make at most "
        + model.layers() + " stages, and a stage takes at most " + stage + " GPUs (tensor-parallel"
        + " size " + t + (cp > 1 ? " x context-parallel size " + cp : "") + " x one sequence"
        + " per data-parallel replica)", reach));
  }

  /** The verdict of a cluster that at most {@code reach} GPUs of stages can cover. */
  private static PlanResult.Infeasible tooFew(PlanRequest req, String why, long reach) {
    ClusterSpec c = req.cluster();
    long nodes = reach / c.gpusPerNode();
    return new PlanResult.Infeasible(0, c.nodes(), "no pipeline of " + req.model().name()
        + " covers all " + c.gpuCount() + " GPUs of " + c.toShortString() + " for a global batch"
        + " of " + req.globalBatch() + ": " + why + ", " + reach + " GPUs in all; use "
        + (nodes > 0 ? "at most " + nodes + " nodes, or " : "") + "a larger global batch",
        true);
  }

  /**
   * The microbatch sizes whose stages can cover the cluster.
   *
   * @param req the request
   * @param space its search space
   * @param sizes the sizes the search would try
   * @return those of them some stage partition can cover the cluster with, in the same order
   */
  static List<Integer> coverable(PlanRequest req, SearchSpace space, List<Integer> sizes) {
    List<Integer> out = new ArrayList<>();
    for (int g : sizes) {
      if (covers(req, space, usable(req, space, g))) {
        out.add(g);
      }
    }
    return out;
  }

  /** The GPUs of each submesh shape some stage of microbatch size g can run on. */
  private static List<Integer> usable(PlanRequest req, SearchSpace space, int g) {
    List<Integer> out = new ArrayList<>();
    for (SubmeshShape s : space.shapes()) {
      for (int t : SearchRules.tensorDegrees(req, s.devices())) {
        if (!SearchRules.stageSettings(req, s.devices() / t, t, g).isEmpty()) {
          out.add(s.devices());
          break;
        }
      }
    }
    return out;
  }

  /** The most stages a DP over the space's grouped layers can make. */
  private static int maxStages(PlanRequest req, SearchSpace space) {
    return (req.model().layers() + space.group() - 1) / space.group();
  }

  /**
   * Whether at most {@link #maxStages} stages of the given sizes sum to the cluster's GPUs:
   * reachable sums by stage count, as bit sets over units of the sizes' greatest common divisor.
   */
  private static boolean covers(PlanRequest req, SearchSpace space, List<Integer> sizes) {
    int total = req.cluster().gpuCount();
    int unit = total;
    for (int s : sizes) {
      unit = gcd(unit, s);
    }
    if (sizes.isEmpty()) {
      return false;
    }
    int target = total / unit;
    java.util.BitSet reach = new java.util.BitSet(target + 1);
    reach.set(0);
    for (int k = 0; k < maxStages(req, space); k++) {
      java.util.BitSet next = (java.util.BitSet) reach.clone();
      for (int s : sizes) {
        int step = s / unit;
        for (int x = reach.nextSetBit(0); x >= 0 && x + step <= target;
            x = reach.nextSetBit(x + 1)) {
          next.set(x + step);
        }
      }
      if (next.get(target)) {
        return true;
      }
      if (next.equals(reach)) {
        return false;
      }
      reach = next;
    }
    return false;
  }

  private static int gcd(int a, int b) {
    return b == 0 ? a : gcd(b, a % b);
  }

  /**
   * Why no microbatch size can cover the cluster, in one sentence with its arithmetic.
   *
   * @param req the request
   * @param space its search space
   * @param sizes the sizes the search would have tried
   * @return the verdict
   */
  static PlanResult.Infeasible uncovered(PlanRequest req, SearchSpace space,
      List<Integer> sizes) {
    ModelSpec model = req.model();
    ClusterSpec c = req.cluster();
    int largest = 0;
    for (int g : sizes) {
      for (int d : usable(req, space, g)) {
        largest = Math.max(largest, d);
      }
    }
    int stages = maxStages(req, space);
    String layers = space.group() == 1 ? "its " + model.layers() + " layers make at most "
        + stages + " stages" : "the search keeps its " + model.layers() + " layers in groups of "
        + space.group() + " on this cluster (the stage DP's size limit), so a pipeline has at"
        + " most " + stages + " stage" + (stages == 1 ? "" : "s");
    long reach = (long) stages * largest;
    if (reach < c.gpuCount()) {
      return tooFew(req, layers + ", and a stage takes at most " + largest + " GPUs (each"
          + " data-parallel replica of it takes at least 1 sequence of a microbatch that"
          + " divides the global batch)", reach);
    }
    return new PlanResult.Infeasible(0, c.nodes(), "no pipeline of " + model.name() + " covers"
        + " all " + c.gpuCount() + " GPUs of " + c.toShortString() + " for a global batch of "
        + req.globalBatch() + ": " + layers + ", and no set of that many stages whose"
        + " data-parallel replicas take 1, 2, 4 or 8 sequences each of one microbatch that"
        + " divides the global batch has that many GPUs; use a node count with more factors of 2"
        + " or another global batch" + SharedBatch.advice(c.gpuCount(), req.globalBatch()),
        true);
  }

}
