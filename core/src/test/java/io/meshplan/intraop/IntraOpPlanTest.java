package io.meshplan.intraop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.meshplan.cluster.AlphaBetaCommModel;
import io.meshplan.cluster.ClusterCommModels;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.cluster.LogicalMesh;
import io.meshplan.graph.DType;
import io.meshplan.graph.Graph;
import io.meshplan.model.AlpaMlpBuilder;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The plan model of {@code shard}: costs per instruction that add up, typed units, renderers. */
class IntraOpPlanTest {
  private static final double MIB = 1024.0 * 1024;

  private static ShardingPlan abstractPlan(int layers, int batch, int hidden, double b0,
      double b1) {
    Graph g = AlpaMlpBuilder.build(layers, batch, hidden, DType.F32);
    LogicalMesh mesh = LogicalMesh.of(2, 2);
    MeshEnv env = new MeshEnv(new AlphaBetaCommModel(mesh, new double[] {1, 1},
        new double[] {b0, b1}), 1000 * MIB, Optional.empty());
    return new AutoSharding(env, SolverOptions.defaults()).plan(g);
  }

  @Test
  void instructionCostsAddUpToTheObjective() {
    // Node costs plus edge costs are the objective (Alpa section 4.2), and every cost belongs to
    // exactly one instruction: its strategy's compute and collectives and its operands'
    // resharding. Seeded random MLPs and prices.
    Random rnd = new Random(7);
    for (int trial = 0; trial < 6; trial++) {
      ShardingPlan sp = abstractPlan(1 + rnd.nextInt(3), 64 << rnd.nextInt(4),
          64 << rnd.nextInt(4), 0.1 + rnd.nextDouble(), 0.01 + rnd.nextDouble());
      IntraOpPlan p = IntraOpPlan.of(sp);
      double sum = 0;
      for (InstructionCost c : p.instructions()) {
        sum += c.total();
      }
      assertThat(sum).as("trial %d", trial).isCloseTo(p.objective(),
          within(1e-9 * (1 + p.objective())));
      assertThat(p.computeCost() + p.communicationCost() + p.reshardingCost())
          .isCloseTo(p.objective(), within(1e-9 * (1 + p.objective())));
      assertThat(p.unit()).isEqualTo(CostUnit.ALPA_UNITS);
      // The layouts are those of the solver's plan.
      for (InstructionCost c : p.instructions()) {
        assertThat(c.sharding()).isEqualTo(sp.hloSharding(c.id()));
        assertThat(c.strategy()).isEqualTo(sp.strategy(c.id()).name());
      }
    }
  }

  @Test
  void alpaMlpModelParallelCostsOneAllReduce() {
    // batch 128, hidden 1024 on 2x2 with beta (1, 1): Alpa's expectation for this shape is one
    // all-reduce of a 128*1024*4 = 524288-byte activation. On a 2x2 mesh the plan splits it over
    // both axes of 2 GPUs; whatever the split, the objective is the sum of the instructions'
    // communication and resharding, and the bytes per axis are the costs minus the latency.
    IntraOpPlan p = IntraOpPlan.of(abstractPlan(2, 128, 1024, 1, 1));
    double bytes = 0;
    int collectives = 0;
    for (InstructionCost c : p.instructions()) {
      for (double b : c.commBytesPerAxis()) {
        bytes += b;
        collectives += b > 0 ? 1 : 0;
      }
    }
    // Each collective with bytes costs alpha 1 plus its bytes (beta 1).
    assertThat(p.objective()).isCloseTo(bytes + collectives, within(1e-6 * p.objective()));
    assertThat(p.computeCost()).isZero();
  }

  @Test
  void clusterPlansAreInSecondsAndPriceCompute() {
    ClusterSpec cs = ClusterSpec.parse("1x4:a100-80gb");
    LogicalMesh mesh = LogicalMesh.of(1, 4);
    Graph g = AlpaMlpBuilder.build(2, 1024, 1024, DType.BF16);
    MeshEnv env = MeshEnv.onCluster(cs.gpu(), ClusterCommModels.catalog(cs, mesh),
        cs.gpu().hbmBytes(), 2);
    IntraOpPlan p = IntraOpPlan.of(new AutoSharding(env, SolverOptions.defaults()).plan(g));
    assertThat(p.unit()).isEqualTo(CostUnit.SECONDS);
    assertThat(p.computeCost()).isPositive();
    assertThat(p.computeCost() + p.communicationCost() + p.reshardingCost())
        .isCloseTo(p.objective(), within(1e-9 * p.objective()));
    assertThat(p.commBytesPerAxis()[0]).isZero();
  }

  @Test
  void jsonKeepsTheContractAndAddsCosts() throws Exception {
    IntraOpPlan p = IntraOpPlan.of(abstractPlan(2, 1024, 128, 1, 0.01));
    JsonNode root = new ObjectMapper().readTree(IntraOpPlanJson.write("mlp", p, 1.5,
        List.of("w")));
    for (String f : new String[] {"objective", "status", "solveSeconds", "bound", "unit",
        "costUnit", "costs", "communicationBytesPerAxis", "peakMemoryBytes"}) {
      assertThat(root.has(f)).as(f).isTrue();
    }
    assertThat(root.get("unit").asText()).isEqualTo("ALPA_UNITS");
    assertThat(root.get("costUnit").asText()).isEqualTo("alpha-beta units");
    assertThat(root.get("objective").doubleValue()).isEqualTo(p.objective());
    assertThat(root.get("totalSeconds").doubleValue()).isEqualTo(1.5);
    JsonNode ins = root.get("instructions");
    assertThat(ins.size()).isEqualTo(p.instructions().size());
    double[] axes = new double[2];
    for (int i = 0; i < ins.size(); i++) {
      JsonNode n = ins.get(i);
      InstructionCost c = p.instructions().get(i);
      for (String f : new String[] {"name", "op", "shape", "strategy", "sharding", "compute",
          "communication", "resharding", "communicationBytesPerAxis"}) {
        assertThat(n.has(f)).as(f).isTrue();
      }
      assertThat(n.get("name").asText()).isEqualTo(c.name());
      assertThat(n.get("resharding").doubleValue()).isEqualTo(c.resharding());
      for (int a = 0; a < 2; a++) {
        axes[a] += n.get("communicationBytesPerAxis").get(a).doubleValue();
      }
    }
    // The per-axis totals are the sums over the instructions. With beta (1, 0.01) the plan
    // splits the batch over axis 0 and the hidden dimension over axis 1: two weight gradients
    // (128*128*4 bytes, half of it per device) are all-reduced on axis 0, 2 * 2*(2-1)/2 * 32768 =
    // 65536 bytes; one activation (1024*128*4 bytes, half per device) on the cheap axis 1,
    // 2*(2-1)/2 * 262144 = 262144 bytes.
    assertThat(root.get("communicationBytesPerAxis").get(0).doubleValue()).isEqualTo(axes[0])
        .isEqualTo(65536.0);
    assertThat(root.get("communicationBytesPerAxis").get(1).doubleValue()).isEqualTo(axes[1])
        .isEqualTo(262144.0);
  }

  @Test
  void textTableKeepsItsColumnsAndCostsAddThem() {
    IntraOpPlan p = IntraOpPlan.of(abstractPlan(2, 1024, 128, 1, 0.01));
    String plain = IntraOpPlanText.write("mlp", p, 1.0, false);
    String costs = IntraOpPlanText.write("mlp", p, 1.0, true);
    assertThat(plain.lines().findFirst().orElseThrow().split("\\s+"))
        .containsExactly("id", "name", "op", "shape", "strategy", "sharding");
    assertThat(costs.lines().findFirst().orElseThrow().split("\\s+"))
        .containsExactly("id", "name", "op", "shape", "strategy", "compute", "comm", "reshard",
            "bytes/axis", "sharding");
    assertThat(plain).contains("model mlp: 16 instructions").contains("(alpha-beta units)")
        .doesNotContain("costs:");
    assertThat(costs).contains("costs: compute 0.00000");
  }
}
