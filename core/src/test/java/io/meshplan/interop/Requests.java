package io.meshplan.interop;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.interop.cost.IlpLayerCostModel;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.model.ModelSpec;
import io.meshplan.plan.ParallelConfig;
import io.meshplan.planner.Pricing;
import io.meshplan.sim.MemoryFit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Planning requests priced by the catalog, for the search's own tests: the GPU's whole memory and
 * the model's precision, not the product's defaults (a job built as the command line builds it is
 * {@code TrainingJob.of} priced by {@code Planner.price}).
 */
final class Requests {
  private Requests() {}

  static ModelSpec training(ModelSpec m, int globalBatch, DType t) {
    return new ModelSpec(m.name(), m.family(), m.layers(), m.hidden(), m.heads(), m.kvHeads(),
        m.ffn(), m.vocab(), m.seq(), globalBatch, t, m.arch());
  }

  static PlanRequest of(ModelSpec m, String cluster, int globalBatch, boolean overlap) {
    return of(m, ClusterSpec.parse(cluster), globalBatch, overlap);
  }

  static PlanRequest of(ModelSpec m, ClusterSpec cs, int globalBatch, boolean overlap) {
    return new PlanRequest(m, cs, globalBatch, 0, cs.gpu().hbmBytes(), Pricing.catalog(),
        m.dtype().bytes(), overlap);
  }

  static IlpLayerCostModel layers(PlanRequest req) {
    return new IlpLayerCostModel(req.model(), req.cluster(), req.comm(), req.model().dtype(),
        SolverOptions.defaults());
  }

  /**
   * The interleaved search of one request at a microbatch size drawn from those the search
   * tries, over whole-GPU submeshes: each {@link #interleaver} call starts a fresh search.
   *
   * @param req the request
   * @param asm its stage assembler
   * @param shapes the submeshes of its cluster
   * @param microbatch the microbatch size drawn
   */
  record Interleaved(PlanRequest req, io.meshplan.interop.cost.StageAssembler asm,
      List<io.meshplan.interop.space.SubmeshShape> shapes, int microbatch) {
    /** Draws the microbatch size with {@code rnd}. */
    static Interleaved of(PlanRequest req, java.util.Random rnd) {
      List<Integer> sizes = io.meshplan.interop.space.SearchRules.microbatchSizes(req);
      int g = sizes.get(rnd.nextInt(sizes.size()));
      return new Interleaved(req, new io.meshplan.interop.cost.StageAssembler(req, layers(req)),
          io.meshplan.interop.space.SubmeshShape.shapes(req.cluster().nodes(),
              req.cluster().gpusPerNode(), 1), g);
    }

    /** A fresh search. */
    Interleaver interleaver() {
      return new Interleaver(req, asm, shapes, microbatch);
    }
  }

  /**
   * The configurations, each under full recomputation followed by itself recomputing only the
   * first 1 to N - 1 blocks of each chunk (N its largest chunk): every count a search may try.
   */
  static List<ParallelConfig> withEveryRecomputeCount(List<ParallelConfig> configs, int layers) {
    List<ParallelConfig> out = new ArrayList<>();
    for (ParallelConfig c : configs) {
      out.add(c);
      if (c.recompute() == io.meshplan.model.Recompute.FULL) {
        int most = java.util.Arrays.stream(c.chunkLayers(layers)).max().orElse(1);
        for (int r = 1; r < most; r++) {
          out.add(c.withRecomputeLayers(r));
        }
      }
    }
    return out;
  }

  /**
   * The reference of the grid searches: the least iteration of the configurations {@code takes}
   * accepts, each simulated, among those that fit.
   *
   * @return seconds, or infinity when none fits
   */
  static double fastestFitting(PlanRequest req, PlanSimulator sim, List<ParallelConfig> configs,
      Predicate<ParallelConfig> takes) {
    double best = Double.POSITIVE_INFINITY;
    for (ParallelConfig c : configs) {
      if (!takes.test(c)) {
        continue;
      }
      Optional<PlanSimulator.Evaluated> e = sim.simulate(req, c);
      if (e.isPresent() && MemoryFit.fits(e.get().simulation().peakMemoryBytesPerGpu(),
          req.memoryPerGpu())) {
        best = Math.min(best, e.get().simulation().iterationSeconds());
      }
    }
    return best;
  }
}
