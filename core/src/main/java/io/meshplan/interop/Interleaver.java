package io.meshplan.interop;

import io.meshplan.interop.cost.StageAssembler;
import io.meshplan.interop.space.LayerSetting;
import io.meshplan.interop.space.PlanRequest;
import io.meshplan.interop.space.SearchRules;
import io.meshplan.interop.space.SubmeshShape;
import io.meshplan.model.Recompute;
import io.meshplan.sim.MemoryFit;
import io.meshplan.sim.Schedule;
import io.meshplan.sim.SimulationResult;
import io.meshplan.sim.StageCost;
import io.meshplan.util.Require;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Interleaved 1F1B pipelines for one microbatch size (Narayanan et al., SC'21, section 2.2.2): the
 * stage DP plans Alpa's 1F1B pipelines of contiguous stages; when the microbatches are few for the
 * pipeline depth, splitting each stage's layers into {@code v} chunks cuts the pipeline bubble
 * about {@code v}-fold, for more activation memory and point-to-point traffic. This searches the
 * pipelines of {@code p >= 2} equal groups of whole submeshes (Alpa's shapes that tile the cluster),
 * each group running {@code v >= 2} chunks of about {@code layers / (p * v)} blocks ({@link
 * UniformPipeline#evenChunks}; Megatron-LM needs them equal, Llama 3 trained 405B with fewer on
 * the first and last stage), every logical mesh, recomputation, sequence parallelism, layouts
 * (ILP or Megatron-LM's) and ZeRO stage the DP's stages may take, and {@code p} dividing the
 * microbatches (Megatron-LM's rule).
 *
 * <p>Every candidate is bounded before it is simulated. Time: a group runs all its chunks'
 * forwards and backwards for every microbatch one after another, after the forwards of the stages
 * before it and before their backwards or its own once-per-iteration work ({@link #bound}).
 * Memory: its model state, its largest temporaries and the activations its warm-up forwards hold
 * must fit the GPU ({@link #memoryMayFit}). Candidates are simulated in ascending order of the
 * time bound until the bound passes the best iteration found (the 1F1B
 * plan's to start with), so the result is the best candidate that fits, exactly as simulating
 * them all, unfiltered, would find ({@link #best(double, boolean)} with {@code exhaustive}, the
 * tests' reference). Ties keep the candidate found first in the enumeration order (groups of fewer
 * devices, smaller tensor-parallel size, fewer chunks, then the settings' order).
 *
 * <p>Where the search chooses between keeping and recomputing every block, a pipeline under full
 * recomputation is also tried recomputing only the first {@code r} blocks of each chunk
 * (Megatron-Core's block method, {@code r} from 1 to one less than the largest chunk): the
 * fewest that fit, found by bisection once the family's least bound (one block) is reached, as
 * recomputing a block more never needs more memory nor takes less time; a family
 * with a member that fits is not simulated further.
 */
final class Interleaver {
  private final PlanRequest req;
  private final StageAssembler asm;
  private final List<SubmeshShape> shapes;
  private final int microbatchSize;
  private int simulations;
  private int dropped;

  /**
   * Prepares the search for one microbatch size.
   *
   * @param req the model, cluster, batch and prices
   * @param asm prices layers (the stage DP's, so layer prices are shared)
   * @param shapes the submesh shapes of the stage DP
   * @param microbatchSize sequences per microbatch over a stage's replicas
   */
  Interleaver(PlanRequest req, StageAssembler asm, List<SubmeshShape> shapes,
      int microbatchSize) {
    this.req = Require.nonNull(req, "request");
    this.asm = Require.nonNull(asm, "assembler");
    this.shapes = List.copyOf(shapes);
    Require.that(microbatchSize > 0 && req.globalBatch() % microbatchSize == 0,
        "the microbatch must divide the global batch");
    this.microbatchSize = microbatchSize;
  }

  /**
   * A candidate with its chunk costs and its lower bound on the iteration, seconds. Candidates
   * that differ only in how many first blocks of each chunk they recompute share a family: the
   * index of the first of them. With {@code most > 0} the candidate stands for its pipeline
   * recomputing the first 1 to {@code most} blocks of each chunk (its {@code pipeline} recomputes
   * one): with {@code borrowed}, its costs and bound are those of the same pipeline keeping every
   * activation, its {@code twin} (that pipeline's family, or -1 where it is not listed), until it
   * is reached and queued again with one block's own; the fewest that fit are found when it is
   * reached with those ({@link #fewest}).
   */
  private record Candidate(UniformPipeline pipeline, List<StageCost> costs, double bound,
      int index, int family, int most, int twin, boolean borrowed) {}

  /** The order candidates are simulated in: ascending bound, then enumeration. */
  private static final Comparator<Candidate> ORDER =
      Comparator.comparingDouble(Candidate::bound).thenComparingInt(Candidate::index);

  /** A candidate with its simulation. */
  private record Simulated(Candidate candidate, SimulationResult simulation) {}

  /**
   * The fastest interleaved pipeline that fits and beats a given iteration time.
   *
   * @param beatSeconds the iteration to beat (the 1F1B plan's), seconds
   * @param exhaustive simulate every candidate, also those whose model state alone does not fit,
   *     instead of stopping at the bound (the reference)
   * @return the plan and its simulation, or empty when no candidate fits and beats it
   */
  Optional<PlanSimulator.Evaluated> best(double beatSeconds, boolean exhaustive) {
    java.util.PriorityQueue<Candidate> queue = new java.util.PriorityQueue<>(ORDER);
    queue.addAll(candidates(!exhaustive));
    int microbatches = req.globalBatch() / microbatchSize;
    Candidate best = null;
    SimulationResult bestSim = null;
    double bestSeconds = beatSeconds;
    // Families with a member that fits: recomputing more blocks takes no less time, so the rest
    // of the family (found later in bound order) cannot be faster.
    java.util.Set<Integer> fitted = new java.util.HashSet<>();
    while (!queue.isEmpty()) {
      Candidate c = queue.poll();
      if (!exhaustive && c.bound() > bestSeconds + 1e-12) {
        break;
      }
      if (!exhaustive && (fitted.contains(c.family()) || c.most() > 0 && c.twin() >= 0
          && fitted.contains(c.twin()))) {
        // Where keeping every activation fits, it is faster than recomputing any block.
        continue;
      }
      if (c.borrowed()) {
        // Reached on its twin's bound: queued again on one block's own, below every larger
        // count's.
        List<StageCost> one = c.pipeline().costs(asm);
        if (one != null) {
          queue.add(new Candidate(c.pipeline(), one, bound(one, c.pipeline().depth(),
              microbatches), c.index(), c.family(), c.most(), c.twin(), false));
        }
        continue;
      }
      Optional<Simulated> run = c.most() > 0 ? fewest(c, bestSeconds) : Optional.of(simulate(c));
      if (run.isEmpty()) {
        continue;
      }
      Candidate got = run.get().candidate();
      SimulationResult sim = run.get().simulation();
      double t = sim.iterationSeconds();
      if (!MemoryFit.fits(sim.peakMemoryBytesPerGpu(), req.memoryPerGpu())) {
        continue;
      }
      fitted.add(c.family());
      if (t < bestSeconds - 1e-12
          || (best != null && Math.abs(t - bestSeconds) <= 1e-12 && got.index() < best.index())) {
        best = got;
        bestSim = sim;
        bestSeconds = t;
      }
    }
    if (best == null) {
      return Optional.empty();
    }
    // Only the winner is written out as a plan.
    return Optional.of(new PlanSimulator.Evaluated(best.pipeline().plan(req, asm, best.costs(),
        bestSim, req.globalBatch(), microbatches), bestSim));
  }

  private Simulated simulate(Candidate c) {
    simulations++;
    int microbatches = req.globalBatch() / microbatchSize;
    return new Simulated(c, c.pipeline().simulate(asm, c.costs(), req.globalBatch(),
        microbatches, new Schedule.Interleaved(c.pipeline().chunksPerStage())));
  }

  /**
   * The member of a family standing for partial recomputation that recomputes the fewest first
   * blocks of each chunk and fits, by bisection over 1 to {@code most}, or to the largest count
   * whose bound is not above {@code bestSeconds} where that is fewer (more cannot beat it): recomputing one block
   * more never needs more memory and never takes less time, so it is also the fastest that fits.
   * A count whose memory bound ({@link #memoryMayFit}) already exceeds the GPU is not simulated.
   *
   * @return it with its simulation, or empty when even the largest count tried does not fit
   */
  private Optional<Simulated> fewest(Candidate c, double bestSeconds) {
    int depth = c.pipeline().depth();
    int microbatches = req.globalBatch() / microbatchSize;
    // Counts bounded above the best cannot beat it: the search stops short of them.
    int within = FewestRecomputed.last(c.most(), r -> {
      List<StageCost> costs = c.pipeline().withRecomputeLayers(r).costs(asm);
      return costs != null && bound(costs, depth, microbatches) <= bestSeconds + 1e-12;
    });
    return FewestRecomputed.search(within, r -> {
      UniformPipeline p = c.pipeline().withRecomputeLayers(r);
      List<StageCost> costs = p.costs(asm);
      if (costs == null || !memoryMayFit(costs, depth, microbatches)) {
        return Optional.empty();
      }
      Simulated s = simulate(new Candidate(p, costs, bound(costs, depth, microbatches),
          c.index() + r - 1, c.family(), 0, -1, false));
      return MemoryFit.fits(s.simulation().peakMemoryBytesPerGpu(), req.memoryPerGpu())
          ? Optional.of(s) : Optional.empty();
    });
  }


  /**
   * Simulations run so far.
   *
   * @return the count
   */
  int simulations() {
    return simulations;
  }

  /**
   * Candidates found too large for memory without a simulation, in the last search.
   *
   * @return the count
   */
  int droppedForMemory() {
    return dropped;
  }

  /**
   * Every candidate (with {@code filter}, every one whose model state fits), with its bound, in
   * enumeration order.
   */
  private List<Candidate> candidates(boolean filter) {
    dropped = 0;
    int gpus = req.cluster().gpuCount();
    int perNode = req.cluster().gpusPerNode();
    int layers = req.model().layers();
    int microbatches = req.globalBatch() / microbatchSize;
    TreeSet<Integer> sizes = new TreeSet<>();
    for (SubmeshShape s : shapes) {
      int d = s.devices();
      if (gpus % d == 0 && (d >= perNode ? d % perNode == 0 : perNode % d == 0)) {
        sizes.add(d);
      }
    }
    List<Candidate> out = new ArrayList<>();
    for (int devices : sizes) {
      int depth = gpus / devices;
      if (depth < 2 || microbatches % depth != 0) {
        continue;
      }
      for (int t : SearchRules.tensorDegrees(req, devices)) {
        int d = devices / t;
        List<LayerSetting> settings = SearchRules.stageSettings(req, d, t, microbatchSize);
        if (settings.isEmpty()) {
          continue;
        }
        for (int v = 2; (long) v * depth <= layers
            && StageAssembler.simulationFits(microbatches, v * depth); v++) {
          int[] chunks = UniformPipeline.evenChunks(layers, v * depth);
          int most = FewestRecomputed.most(chunks);
          // The pipelines keeping every activation, priced, with their families: their bounds
          // bound the same pipelines recomputing some blocks.
          java.util.Map<List<Object>, Candidate> keeping = new java.util.HashMap<>();
          for (LayerSetting ls : settings) {
            // Full recomputation of each chunk's first r blocks only, r = 1 .. most, then of
            // every block (r = 0): Megatron-Core's block method, where both extremes are searched.
            int partial = ls.recompute() == Recompute.FULL
                && req.runtime().searchesPartialRecompute() ? most : 0;
            for (int zero : SearchRules.zeroStages(req, d)) {
              int family = out.size();
              // The bounded search stands for the partial counts with one candidate (fewest);
              // the reference lists each.
              int lazy = filter && partial > 1 ? partial : 0;
              for (int r = 1; r <= partial + 1; r++) {
                if (lazy > 0 && r > 1 && r <= partial) {
                  continue;
                }
                UniformPipeline p = new UniformPipeline(depth, d / ls.contextParallel(), t, ls,
                    zero, chunks).withRecomputeLayers(r <= partial ? r : 0);
                boolean stands = lazy > 0 && r == 1;
                Candidate twin = stands
                    ? keeping.get(List.of(ls.withRecompute(Recompute.NONE), zero)) : null;
                if (twin != null) {
                  out.add(new Candidate(p, twin.costs(), twin.bound(), out.size(), family, lazy,
                      twin.family(), true));
                  continue;
                }
                List<StageCost> costs = p.costs(asm);
                if (costs == null) {
                  break;
                }
                double b = bound(costs, depth, microbatches);
                boolean mayFit = stands || memoryMayFit(costs, depth, microbatches);
                if (filter && ls.recompute() == Recompute.NONE
                    && req.runtime().searchesPartialRecompute()) {
                  // A family only where the candidate is listed: a dropped one never fits.
                  int listed = mayFit ? family : -1;
                  keeping.put(List.of(ls, zero), new Candidate(p, costs, b, listed, listed, 0,
                      -1, false));
                }
                if (!mayFit) {
                  dropped++;
                  if (filter) {
                    continue;
                  }
                }
                out.add(new Candidate(p, costs, b, out.size(), family, stands ? lazy : 0, -1,
                    false));
              }
            }
          }
        }
      }
    }
    return out;
  }

  /**
   * Whether every group's memory may fit: a lower bound on the simulated peak. A group holds the
   * weights, gradients and optimizer state of all its chunks and its largest temporaries; and when
   * its last warm-up forward starts ({@link Schedule.Interleaved#warmupForwards}), no backward has
   * run yet, so it holds the activations of every forward up to that one, each its chunk's.
   */
  private boolean memoryMayFit(List<StageCost> costs, int depth, int microbatches) {
    int chunks = costs.size() / depth;
    Schedule.Interleaved schedule = new Schedule.Interleaved(chunks);
    for (int g = 0; g < depth; g++) {
      double state = 0;
      double temp = 0;
      for (int k = g; k < costs.size(); k += depth) {
        var m = costs.get(k).memory();
        state += m.weightsBytes() + m.gradientsBytes() + m.optimizerStateBytes();
        temp = Math.max(temp, m.temporaryBytes());
      }
      int held = Math.min(schedule.warmupForwards(g, depth, microbatches) + 1,
          microbatches * chunks);
      double act = 0;
      for (int k = 0; k < held; k++) {
        int chunk = schedule.forwardChunk(k, depth);
        act += costs.get(chunk * depth + g).memory().activationBytesPerMicrobatch();
      }
      if (state + temp + act > req.memoryPerGpu()) {
        return false;
      }
    }
    return true;
  }

  /**
   * A lower bound on the iteration, seconds: for every group {@code g}, its first op (the forward
   * of virtual stage {@code g}, microbatch 0) waits for the forwards of virtual stages {@code 0..g-1}
   * of that microbatch; it then runs the forwards and backwards of all its chunks for every
   * microbatch; and its last op (the backward of virtual stage {@code g}; the interleaved order
   * ends on chunk 0 when the microbatches are a multiple of the depth) is followed by the backwards
   * of virtual stages {@code g-1..0} of the same microbatch. After its compute the group also runs
   * its gradient reductions that do not overlap the backward pass, then its optimizer steps and
   * parameter gathers, one after another (as {@link io.meshplan.sim.PipelineSimulator} orders
   * them). Transfers are left out, so the bound holds for any of them.
   *
   * @param costs the chunks' costs in layer order
   * @param depth the groups
   * @param microbatches microbatches per iteration, a multiple of {@code depth}
   * @return the largest of the groups' bounds
   */
  static double bound(List<StageCost> costs, int depth, int microbatches) {
    double worst = 0;
    double before = 0;
    double after = 0;
    for (int g = 0; g < depth; g++) {
      double sum = 0;
      double tail = 0;
      double sync = 0;
      for (int k = g; k < costs.size(); k += depth) {
        StageCost c = costs.get(k);
        sum += c.computeSeconds();
        tail += c.optimizerSeconds() + c.paramGatherSeconds();
        sync += c.gradSyncOverlappable() ? 0 : c.gradSyncSeconds();
      }
      double busy = before + microbatches * sum;
      worst = Math.max(worst, busy + Math.max(after, sync + tail));
      before += costs.get(g).forwardSeconds();
      after += costs.get(g).backwardSeconds();
    }
    return worst;
  }
}
