package io.meshplan.interop.cost;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.AlphaBetaCommModel;
import io.meshplan.cluster.ComputeModel;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.DType;
import io.meshplan.graph.GraphBuilder;
import io.meshplan.graph.Opcode;
import io.meshplan.graph.TensorShape;
import io.meshplan.interop.cost.PhaseAccountant.Bucket;
import io.meshplan.intraop.AutoSharding;
import io.meshplan.intraop.MeshEnv;
import io.meshplan.intraop.ShardingPlan;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.sharding.ShardingSpec;
import java.util.EnumSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The training step of a 2-layer MLP (batch 1024, width 128, fp32, SGD), data-parallel on a 4 x 1
 * mesh: batch inputs split over axis 0, weights and updated weights replicated. Collectives cost 1
 * unit per bus byte (alpha 0, beta 1), a dot 1 unit per FLOP on one GPU, every other op nothing.
 * Each dot has 2 * 1024 * 128 * 128 = 33554432 FLOPs, 8388608 per GPU when split 4 ways; each
 * weight gradient is all-reduced once, 2 * (4 - 1) / 4 * 65536 = 98304 bytes per GPU.
 */
class PhaseAccountantTest {
  private static final double DOT = 33554432;
  private static final double DOT_PER_GPU = DOT / 4;
  private static final double ALL_REDUCE = 98304;
  /** A [1024, 128] fp32 value split 4 ways: 1024 * 128 * 4 / 4 bytes. */
  private static final double SLICE = 131072;

  /** The instruction ids of the step. */
  private record Step(ShardingPlan plan, int x, int w0, int w1, int act1, int act2, int loss,
      int coef, int coefB, int grad, int gradW1, int newW1, int gradX1, int gradW0, int newW0,
      int out) {
  }

  private static Step step() {
    GraphBuilder b = new GraphBuilder("mlp");
    TensorShape act = TensorShape.of(DType.F32, 1024, 128);
    TensorShape weight = TensorShape.of(DType.F32, 128, 128);
    int x = b.parameter(act);
    int y = b.parameter(act);
    int w0 = b.parameter(weight);
    int w1 = b.parameter(weight);
    int act1 = b.dot(x, w0);
    int act2 = b.dot(act1, w1);
    int loss = b.binary(Opcode.SUBTRACT, act2, y);
    int coef = b.constant(DType.F32, 2.0 / 1024 / 128);
    int coefB = b.broadcast(coef, new int[] {1024, 128});
    int grad = b.binary(Opcode.MULTIPLY, loss, coefB);
    int gradW1 = b.dot(act1, grad, new int[0], new int[] {0}, new int[0], new int[] {0});
    int newW1 = b.binary(Opcode.SUBTRACT, w1, gradW1);
    int gradX1 = b.dot(grad, w1, new int[0], new int[] {1}, new int[0], new int[] {1});
    int gradW0 = b.dot(x, gradX1, new int[0], new int[] {0}, new int[0], new int[] {0});
    int newW0 = b.binary(Opcode.SUBTRACT, w0, gradW0);
    int out = b.tuple(newW0, newW1);
    b.alias(w0, newW0);
    b.alias(w1, newW1);
    ComputeModel dotsOnly = new ComputeModel() {
      @Override
      public double cost(double flops, double bytes) {
        return 0;
      }

      @Override
      public double dotCost(double flops, double bytes) {
        return flops;
      }
    };
    LogicalMesh mesh = LogicalMesh.of(4, 1);
    MeshEnv env = new MeshEnv(new AlphaBetaCommModel(mesh, new double[] {0, 0},
        new double[] {1, 1}), 1e12, Optional.of(dotsOnly));
    Map<Integer, ShardingSpec> fixed = Map.of(x, ShardingSpec.split(2, 0, 0),
        y, ShardingSpec.split(2, 0, 0), w0, ShardingSpec.replicated(2),
        w1, ShardingSpec.replicated(2), newW0, ShardingSpec.replicated(2),
        newW1, ShardingSpec.replicated(2));
    ShardingPlan plan = new AutoSharding(env, SolverOptions.defaults()).plan(b.build(), fixed);
    return new Step(plan, x, w0, w1, act1, act2, loss, coef, coefB, grad, gradW1, newW1, gradX1,
        gradW0, newW0, out);
  }

  /**
   * Buckets by id, FORWARD for the rest (parameters: free, no bytes); the backward pass is what
   * BACKWARD, RECOMPUTE, ACCUMULATE and GRADIENT hold and keeps the forward values that are not
   * weights nor constants; the batch input x is kept but not inside.
   */
  private static PhaseAccountant.Rules rules(Step s, Map<Integer, Bucket> buckets) {
    Set<Bucket> backward = EnumSet.of(Bucket.BACKWARD, Bucket.RECOMPUTE, Bucket.ACCUMULATE,
        Bucket.GRADIENT);
    return new PhaseAccountant.Rules(id -> buckets.getOrDefault(id, Bucket.FORWARD),
        id -> backward.contains(buckets.getOrDefault(id, Bucket.FORWARD)),
        op -> !buckets.containsKey(op) && op != s.w0() && op != s.w1(),
        op -> op != s.x());
  }

  /** The step as a framework runs it. */
  private static Map<Integer, Bucket> natural(Step s) {
    return Map.of(s.coef(), Bucket.BACKWARD, s.coefB(), Bucket.BACKWARD,
        s.grad(), Bucket.BACKWARD, s.gradX1(), Bucket.BACKWARD, s.gradW1(), Bucket.GRADIENT,
        s.gradW0(), Bucket.GRADIENT, s.newW1(), Bucket.UPDATE, s.newW0(), Bucket.UPDATE,
        s.out(), Bucket.UPDATE);
  }

  @Test
  void trainingStepLandsInItsBuckets() {
    Step s = step();
    PhaseTotals t = PhaseAccountant.account(s.plan(), rules(s, natural(s)));
    // Forward: the two forward dots, 2 * 8388608; no collective before the gradients.
    assertThat(t.forwardSeconds()).isEqualTo(2 * DOT_PER_GPU);
    // Backward: the input-gradient dot and the compute of the two weight-gradient dots,
    // 3 * 8388608 = 25165824; their all-reduces are once per iteration: 2 * 98304 = 196608.
    assertThat(t.backwardSeconds()).isEqualTo(3 * DOT_PER_GPU);
    assertThat(t.gradientSyncSeconds()).isEqualTo(2 * ALL_REDUCE);
    assertThat(t.iterationBytes()).isEqualTo(2 * ALL_REDUCE);
    assertThat(t.recomputeSeconds()).isZero();
    assertThat(t.updateSeconds()).isZero();
    assertThat(t.commSeconds()).isZero();
    assertThat(t.forwardCommSeconds()).isZero();
    assertThat(t.axis0Bytes()).isZero();
    assertThat(t.axis1Bytes()).isZero();
    // All five dots are the model's: 5 * 33554432 = 167772160 FLOPs, no recomputation.
    assertThat(t.modelFlops()).isEqualTo(5 * DOT);
    assertThat(t.hardwareFlops()).isEqualTo(5 * DOT);
    // Kept: x (read by gradW0), act1 (by gradW1) and loss (by grad), each 131072 bytes per GPU;
    // x is the batch, not inside: 3 * 131072 = 393216 in all, 262144 inside.
    assertThat(t.savedBytes()).isEqualTo(3 * SLICE);
    assertThat(t.savedInsideBytes()).isEqualTo(2 * SLICE);
  }

  @Test
  void recomputationIsHardwareWorkAndAccumulationIsNotTheModels() {
    Step s = step();
    Map<Integer, Bucket> buckets = new java.util.HashMap<>(natural(s));
    buckets.put(s.act2(), Bucket.RECOMPUTE);
    buckets.put(s.gradX1(), Bucket.ACCUMULATE);
    PhaseTotals t = PhaseAccountant.account(s.plan(), rules(s, buckets));
    // Forward keeps act1's dot alone: 8388608. Backward: act2's dot (recomputed), the
    // input-gradient dot and the two weight-gradient dots: 4 * 8388608 = 33554432, of which the
    // recomputation is 8388608.
    assertThat(t.forwardSeconds()).isEqualTo(DOT_PER_GPU);
    assertThat(t.backwardSeconds()).isEqualTo(4 * DOT_PER_GPU);
    assertThat(t.recomputeSeconds()).isEqualTo(DOT_PER_GPU);
    // Model FLOPs: act1's dot and the two weight gradients, 3 * 33554432 = 100663296; the
    // hardware also runs the recomputed dot: 4 * 33554432 = 134217728.
    assertThat(t.modelFlops()).isEqualTo(3 * DOT);
    assertThat(t.hardwareFlops()).isEqualTo(4 * DOT);
  }

  @Test
  void perMicrobatchBucketsCountTheirCommunicationEachMicrobatch() {
    Step s = step();
    Map<Integer, Bucket> buckets = new java.util.HashMap<>(natural(s));
    buckets.put(s.gradW0(), Bucket.BACKWARD);
    buckets.put(s.gradW1(), Bucket.BACKWARD);
    PhaseTotals b = PhaseAccountant.account(s.plan(), rules(s, buckets));
    // The two all-reduces now run every microbatch, in the backward pass: 3 * 8388608 + 196608.
    assertThat(b.backwardSeconds()).isEqualTo(3 * DOT_PER_GPU + 2 * ALL_REDUCE);
    assertThat(b.commSeconds()).isEqualTo(2 * ALL_REDUCE);
    assertThat(b.axis0Bytes()).isEqualTo(2 * ALL_REDUCE);
    assertThat(b.forwardCommSeconds()).isZero();
    assertThat(b.forwardAxis0Bytes()).isZero();
    assertThat(b.gradientSyncSeconds()).isZero();
    assertThat(b.iterationBytes()).isZero();
    buckets.put(s.gradW0(), Bucket.FORWARD);
    buckets.put(s.gradW1(), Bucket.FORWARD);
    PhaseTotals f = PhaseAccountant.account(s.plan(), rules(s, buckets));
    // In the forward pass: 4 * 8388608 + 196608 = 33751040, all of the communication forward.
    assertThat(f.forwardSeconds()).isEqualTo(4 * DOT_PER_GPU + 2 * ALL_REDUCE);
    assertThat(f.forwardCommSeconds()).isEqualTo(2 * ALL_REDUCE);
    assertThat(f.forwardAxis0Bytes()).isEqualTo(2 * ALL_REDUCE);
    assertThat(f.axis0Bytes()).isEqualTo(2 * ALL_REDUCE);
    assertThat(f.forwardAxis1Bytes()).isZero();
    assertThat(f.backwardSeconds()).isEqualTo(DOT_PER_GPU);
  }

  @Test
  void theUpdateIsCountedOncePerIterationWithoutFlops() {
    Step s = step();
    Map<Integer, Bucket> buckets = new java.util.HashMap<>(natural(s));
    buckets.put(s.gradW0(), Bucket.UPDATE);
    buckets.put(s.gradW1(), Bucket.UPDATE);
    PhaseTotals t = PhaseAccountant.account(s.plan(), rules(s, buckets));
    // The weight-gradient dots, all-reduces included, as update work: 2 * (8388608 + 98304);
    // the model FLOPs lose them: 3 * 33554432.
    assertThat(t.updateSeconds()).isEqualTo(2 * (DOT_PER_GPU + ALL_REDUCE));
    assertThat(t.iterationBytes()).isEqualTo(2 * ALL_REDUCE);
    assertThat(t.gradientSyncSeconds()).isZero();
    assertThat(t.backwardSeconds()).isEqualTo(DOT_PER_GPU);
    assertThat(t.modelFlops()).isEqualTo(3 * DOT);
  }

  @Test
  void theCollectivesOfOneFusedGemmsPartsCountOnce() {
    Step s = step();
    Map<Integer, Bucket> buckets = new java.util.HashMap<>(natural(s));
    buckets.put(s.gradW0(), Bucket.BACKWARD);
    buckets.put(s.gradW1(), Bucket.BACKWARD);
    PhaseAccountant.Rules apart = rules(s, buckets);
    // The two weight-gradient products as parts of one fused GEMM (group 7): their all-reduces,
    // 98304 each, are one collective of the larger part, 98304; their compute stays.
    PhaseAccountant.Rules fused = new PhaseAccountant.Rules(apart.bucket(), apart.readsSaved(),
        apart.kept(), apart.inside(), apart.sequenceShard(), apart.fp8Copy(),
        id -> id == s.gradW0() || id == s.gradW1() ? 7 : -1, false);
    PhaseTotals a = PhaseAccountant.account(s.plan(), apart);
    PhaseTotals f = PhaseAccountant.account(s.plan(), fused);
    assertThat(a.commSeconds()).isEqualTo(2 * ALL_REDUCE);
    assertThat(f.commSeconds()).isEqualTo(ALL_REDUCE);
    assertThat(f.axis0Bytes()).isEqualTo(ALL_REDUCE);
    assertThat(f.backwardSeconds()).isEqualTo(3 * DOT_PER_GPU + ALL_REDUCE);
    assertThat(f.modelFlops()).isEqualTo(a.modelFlops());
  }
}
