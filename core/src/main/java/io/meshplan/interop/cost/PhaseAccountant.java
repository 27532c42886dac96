package io.meshplan.interop.cost;

import io.meshplan.graph.CallInliner;
import io.meshplan.graph.Graph;
import io.meshplan.graph.Instruction;
import io.meshplan.graph.OpCost;
import io.meshplan.graph.TensorShape;
import io.meshplan.intraop.MeshEnv;
import io.meshplan.intraop.PlanCommBytes;
import io.meshplan.intraop.ShardingPlan;
import io.meshplan.intraop.Strategy;
import io.meshplan.sharding.ReshardingCost;
import io.meshplan.sharding.ShardingSpec;
import io.meshplan.util.Require;
import java.util.function.IntFunction;
import java.util.function.IntPredicate;
import java.util.function.IntToDoubleFunction;
import java.util.function.IntUnaryOperator;

/**
 * Counts a planned layer's instructions by phase, for preset transformer layers ({@link
 * IlpLayerCostModel}) and the layers of an HLO training step alike. Each instruction's cost under
 * the plan ({@link #seconds}: its strategy's compute, and its strategy's communication plus the
 * resharding of its operands) and the bytes it sends per mesh axis ({@link PlanCommBytes}) are
 * counted in the bucket the caller puts it in; the caller also says which values the backward pass
 * keeps from the forward pass. Instructions are summed in graph order, each bucket's fields in one
 * fixed sequence, so equal plans give equal totals to the last bit.
 */
public final class PhaseAccountant {
  private PhaseAccountant() {}

  /** Where an instruction's cost is counted; dot and convolution FLOPs are counted as each says. */
  public enum Bucket {
    /**
     * The forward pass, per microbatch: compute and communication in forward seconds, the
     * communication and bytes also in the per-microbatch totals and their forward parts; model
     * FLOPs.
     */
    FORWARD,
    /**
     * The backward pass, per microbatch: compute and communication in backward seconds, the
     * communication and bytes in the per-microbatch totals; model FLOPs.
     */
    BACKWARD,
    /**
     * The forward pass run again in the backward pass under activation recomputation, per
     * microbatch: as {@link #BACKWARD}, also in recompute seconds, and its FLOPs are hardware FLOPs
     * only (the model's FLOPs were counted in the forward pass). Values re-derived without
     * recomputation enabled are {@link #BACKWARD} work.
     */
    RECOMPUTE,
    /**
     * Gradient accumulation in fp32, which runs every microbatch in the backward pass: as {@link
     * #BACKWARD}, without model FLOPs.
     */
    ACCUMULATE,
    /**
     * Work that only computes gradients the update reads: its compute in backward seconds per
     * microbatch and its FLOPs as model FLOPs; its communication and bytes once per iteration, as
     * frameworks reduce the sum of the microbatches' gradients once.
     */
    GRADIENT,
    /**
     * The optimizer update, once per iteration: compute and communication in update seconds, bytes
     * per iteration, no FLOPs.
     */
    UPDATE
  }

  /**
   * How a layer's instructions are counted.
   *
   * @param bucket the bucket of each instruction id
   * @param readsSaved whether an instruction id reads the values the backward pass keeps
   * @param kept whether an operand id read by such an instruction is a value kept from the forward
   *     to the backward pass
   * @param inside whether a kept value id is computed inside the layer
   * @param sequenceShard whether the framework keeps a value id for the backward pass as one
   *     sequence shard per tensor-parallel GPU whatever its layout in the plan (Megatron-LM's
   *     sequence parallelism keeps the residual stream so and gathers it again when needed)
   * @param fp8Copy whether the framework keeps a value id as an FP8 copy, one byte per element
   *     (Megatron-Core's {@code activation_func_fp8_input_store})
   * @param fused the fused GEMM an instruction id is a part of, or -1: the collectives that the
   *     parts' own strategies perform (a reduce-scatter of each part's partial input gradient)
   *     are one collective of the fused GEMM, counted once, as the largest part's
   * @param sharedReshards whether a value resharded into one layout for several instructions of
   *     one bucket is resharded once, its result read by all of them (as Megatron-LM gathers a
   *     row-parallel layer's output gradient once for its input and its weight gradients); if
   *     not, each reader pays its own resharding, as the layer ILP prices it
   */
  public record Rules(IntFunction<Bucket> bucket, IntPredicate readsSaved, IntPredicate kept,
      IntPredicate inside, IntPredicate sequenceShard, IntPredicate fp8Copy,
      IntUnaryOperator fused, boolean sharedReshards) {
    /** Checks that every rule is given. */
    public Rules {
      Require.nonNull(bucket, "bucket");
      Require.nonNull(readsSaved, "readsSaved");
      Require.nonNull(kept, "kept");
      Require.nonNull(inside, "inside");
      Require.nonNull(sequenceShard, "sequenceShard");
      Require.nonNull(fp8Copy, "fp8Copy");
      Require.nonNull(fused, "fused");
    }

    /**
     * Rules without fused GEMMs.
     *
     * @param bucket the bucket of each instruction id
     * @param readsSaved whether an instruction id reads the values the backward pass keeps
     * @param kept whether an operand id read by such an instruction is a value kept
     * @param inside whether a kept value id is computed inside the layer
     * @param sequenceShard whether a value id is kept as one sequence shard per tensor GPU
     * @param fp8Copy whether a value id is kept as an FP8 copy
     */
    public Rules(IntFunction<Bucket> bucket, IntPredicate readsSaved, IntPredicate kept,
        IntPredicate inside, IntPredicate sequenceShard, IntPredicate fp8Copy) {
      this(bucket, readsSaved, kept, inside, sequenceShard, fp8Copy, id -> -1, false);
    }

    /**
     * Rules that keep every value in its own type.
     *
     * @param bucket the bucket of each instruction id
     * @param readsSaved whether an instruction id reads the values the backward pass keeps
     * @param kept whether an operand id read by such an instruction is a value kept
     * @param inside whether a kept value id is computed inside the layer
     * @param sequenceShard whether a value id is kept as one sequence shard per tensor GPU
     */
    public Rules(IntFunction<Bucket> bucket, IntPredicate readsSaved, IntPredicate kept,
        IntPredicate inside, IntPredicate sequenceShard) {
      this(bucket, readsSaved, kept, inside, sequenceShard, id -> false);
    }

    /**
     * Rules without sequence shards.
     *
     * @param bucket the bucket of each instruction id
     * @param readsSaved whether an instruction id reads the values the backward pass keeps
     * @param kept whether an operand id read by such an instruction is a value kept
     * @param inside whether a kept value id is computed inside the layer
     */
    public Rules(IntFunction<Bucket> bucket, IntPredicate readsSaved, IntPredicate kept,
        IntPredicate inside) {
      this(bucket, readsSaved, kept, inside, id -> false);
    }
  }

  /**
   * Sums a planned layer's costs by bucket.
   *
   * @param plan the layer's plan (its environment prices the instructions)
   * @param rules each instruction's bucket and the values kept for the backward pass
   * @return the totals: seconds and bytes per microbatch or per iteration, FLOPs, saved bytes
   */
  public static PhaseTotals account(ShardingPlan plan, Rules rules) {
    return account(plan, rules, id -> 1);
  }

  /**
   * Sums a planned layer's costs by bucket, an instruction's FLOPs counted as many times as the
   * replica runs it: once for an instruction of the replica's graph, t times for one GPU's own
   * work that each of the replica's t GPUs runs on its own rows (a mixture-of-experts block's
   * local experts). Seconds and bytes are one GPU's either way.
   *
   * @param plan the layer's plan (its environment prices the instructions)
   * @param rules each instruction's bucket and the values kept for the backward pass
   * @param copies by instruction id, how many times the replica runs its FLOPs, >= 1
   * @return the totals: seconds and bytes per microbatch or per iteration, FLOPs, saved bytes
   */
  public static PhaseTotals account(ShardingPlan plan, Rules rules, IntToDoubleFunction copies) {
    Graph g = plan.graph();
    PlanCommBytes volume = PlanCommBytes.of(plan);
    int[] kept = fusedCollectives(plan, rules.fused());
    double[][] own = volume.strategyBytes();
    java.util.Set<Reshard> done = new java.util.HashSet<>();
    Sums s = new Sums();
    for (Instruction ins : g.instructions()) {
      int id = ins.id();
      double n = copies.applyAsDouble(id);
      double[] cc = seconds(plan, ins);
      double b0 = volume.bytes(id, 0);
      double b1 = volume.bytes(id, 1);
      if (kept[id] != id) {
        // A fused GEMM's part whose own collective is the fused GEMM's, counted at another part.
        cc[1] -= CallInliner.repeat(ins) * plan.strategy(id).commCost();
        b0 -= own[id][0];
        b1 -= own[id][1];
      }
      if (rules.sharedReshards()) {
        double[] again = reshardedBefore(plan, ins, rules.bucket().apply(id), done);
        cc[1] -= again[0];
        b0 -= again[1];
        b1 -= again[2];
      }
      s.add(rules.bucket().apply(id), cc, b0, b1, n * OpCost.modelFlops(g, ins));
      // Work a fused kernel does again (the scores of fused attention's backward).
      s.recFlops += n * OpCost.recomputedFlops(g, ins);
    }
    double[] saved = saved(plan, rules);
    return new PhaseTotals(s.fwd, s.bwd, s.rec, s.comm, s.fwdComm, s.sync, s.update, s.modelFlops,
        s.recFlops + s.modelFlops, s.axis0, s.axis1, s.fwdAxis0, s.fwdAxis1, s.iteration,
        saved[0], saved[1], s.acc);
  }

  /** A value resharded into a layout by an instruction of a bucket. */
  private record Reshard(Bucket bucket, int value, ShardingSpec to) {}

  /**
   * The resharding of an instruction's operands that an earlier instruction of the same bucket
   * already did (the same value from the same layout into the same one): {seconds, bytes on axis
   * 0, bytes on axis 1}. Records the reshardings it does first in {@code done}.
   */
  private static double[] reshardedBefore(ShardingPlan plan, Instruction ins, Bucket bucket,
      java.util.Set<Reshard> done) {
    Graph g = plan.graph();
    MeshEnv env = plan.env();
    Strategy st = plan.strategy(ins.id());
    double[] out = new double[3];
    for (int k = 0; k < ins.operands().size(); k++) {
      int op = ins.operand(k);
      ShardingSpec from = plan.spec(op);
      ShardingSpec to = st.operandSpec(k);
      if (!(g.get(op).shape() instanceof TensorShape shape) || to == null || from == null
          || from.equals(to)) {
        continue;
      }
      if (done.add(new Reshard(bucket, op, to))) {
        continue;
      }
      double rep = CallInliner.repeat(ins);
      out[0] += rep * ReshardingCost.of(shape, from, to, env.comm());
      for (int a = 0; a < 2 && a < env.mesh().rank(); a++) {
        if (env.mesh().size(a) > 1) {
          out[1 + a] += rep * ReshardingCost.of(shape, from, to,
              new io.meshplan.cluster.BusBytesCommModel(env.mesh(), a));
        }
      }
    }
    return out;
  }

  /**
   * For each instruction id, the id whose own collective stands for its fused GEMM's: itself when
   * it is in no fused GEMM or is the part whose strategy communicates the most (the first such
   * part in graph order), otherwise that part.
   */
  private static int[] fusedCollectives(ShardingPlan plan, IntUnaryOperator fused) {
    Graph g = plan.graph();
    int[] kept = new int[g.size()];
    java.util.Map<Integer, Integer> largest = new java.util.HashMap<>();
    for (Instruction ins : g.instructions()) {
      int id = ins.id();
      kept[id] = id;
      int group = fused.applyAsInt(id);
      if (group < 0) {
        continue;
      }
      Integer best = largest.get(group);
      if (best == null || plan.strategy(id).commCost() > plan.strategy(best).commCost()) {
        largest.put(group, id);
      }
    }
    for (Instruction ins : g.instructions()) {
      int group = fused.applyAsInt(ins.id());
      if (group >= 0) {
        kept[ins.id()] = largest.get(group);
      }
    }
    return kept;
  }

  /**
   * What one instruction costs under a plan: its strategy's compute, and its strategy's
   * communication plus the resharding of its operands into the layouts the strategy reads, priced
   * by the plan's environment.
   *
   * @param plan the plan
   * @param ins the instruction
   * @return {compute, communication}, in the unit of the plan's prices (seconds on a cluster)
   */
  public static double[] seconds(ShardingPlan plan, Instruction ins) {
    Graph g = plan.graph();
    MeshEnv env = plan.env();
    Strategy st = plan.strategy(ins.id());
    double reshard = 0;
    for (int k = 0; k < ins.operands().size(); k++) {
      int op = ins.operand(k);
      if (g.get(op).shape() instanceof TensorShape shape && st.operandSpec(k) != null) {
        reshard += ReshardingCost.of(shape, plan.spec(op), st.operandSpec(k), env.comm());
      }
    }
    return new double[] {st.computeCost(), st.commCost() + reshard};
  }

  /** Bytes per GPU of the kept values, in all and inside the layer, in id order. */
  private static double[] saved(ShardingPlan plan, Rules rules) {
    Graph g = plan.graph();
    boolean[] saved = new boolean[g.size()];
    for (Instruction ins : g.instructions()) {
      if (!rules.readsSaved().test(ins.id())) {
        continue;
      }
      for (int o : ins.operands()) {
        saved[o] |= rules.kept().test(o);
      }
    }
    double bytes = 0;
    double inside = 0;
    for (int i = 0; i < saved.length; i++) {
      if (saved[i] && g.get(i).shape() instanceof TensorShape shape) {
        double b = plan.spec(i).localBytes(shape, plan.env().mesh());
        if (rules.sequenceShard().test(i)) {
          // One sequence shard per GPU of the tensor axis (axis 1 of the layer's mesh).
          b = Math.min(b, shape.byteSize() / (double) plan.env().mesh().size(1));
        }
        if (rules.fp8Copy().test(i)) {
          b /= shape.dtype().bytes();
        }
        bytes += b;
        if (rules.inside().test(i)) {
          inside += b;
        }
      }
    }
    return new double[] {bytes, inside};
  }

  /** Running sums, each added to in instruction order. */
  private static final class Sums {
    double fwd;
    double bwd;
    double rec;
    double comm;
    double fwdComm;
    double sync;
    double update;
    double modelFlops;
    double recFlops;
    double axis0;
    double axis1;
    double fwdAxis0;
    double fwdAxis1;
    double iteration;
    double acc;

    /** Counts one instruction: {compute, communication}, its bytes per axis, its dot FLOPs. */
    void add(Bucket b, double[] cc, double bytes0, double bytes1, double dot) {
      double c = cc[0] + cc[1];
      switch (b) {
        case FORWARD -> {
          fwd += c;
          fwdComm += cc[1];
          fwdAxis0 += bytes0;
          fwdAxis1 += bytes1;
          modelFlops += dot;
        }
        case BACKWARD -> {
          bwd += c;
          modelFlops += dot;
        }
        case RECOMPUTE -> {
          bwd += c;
          rec += c;
          recFlops += dot;
        }
        case ACCUMULATE -> {
          bwd += c;
          acc += cc[0];
        }
        case GRADIENT -> {
          bwd += cc[0];
          sync += cc[1];
          iteration += bytes0 + bytes1;
          modelFlops += dot;
          return;
        }
        case UPDATE -> {
          update += c;
          iteration += bytes0 + bytes1;
          return;
        }
      }
      comm += cc[1];
      axis0 += bytes0;
      axis1 += bytes1;
    }
  }
}
