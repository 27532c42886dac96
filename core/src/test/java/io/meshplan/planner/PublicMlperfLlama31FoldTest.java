package io.meshplan.planner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.cluster.AttentionKernel;
import io.meshplan.model.Fp8Scaling;
import io.meshplan.model.Recompute;
import io.meshplan.sim.SimulationResult;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * MLPerf Training v5.1's Llama 3.1 8B and 405B pre-training rows in NVIDIA's implementation on
 * GB200 and GB300 NVL72 racks ({@code folds/mlperf_nvidia_llama31.csv}, set {@code mlp31} of the
 * mlperf-nvidia fold) are stated as their submissions' config files ran them, with the rates
 * their logs measured, and each fits its GPUs' memory as it ran.
 */
class PublicMlperfLlama31FoldTest {
  private static List<PublicRun> rows() {
    List<PublicRun> rows = PublicFolds.of(List.of("mlperf-nvidia")).stream()
        .filter(r -> r.set().equals("mlp31")).toList();
    assertThat(rows).hasSize(16);
    return rows;
  }

  /**
   * Every row: 8,192 tokens, no recomputation, the distributed optimizer, gradients reduced in
   * bf16, the fused loss. The 8B rows on eight GPUs and NVIDIA's 405B rows train in NVFP4 with
   * bf16 weights; the 8B rack rows in FP8 with per-tensor current scaling and Nebius's H200 rows
   * in FP8 with delayed scaling, and Dell's nodes in FP8 with current scaling, all with the
   * weights kept in FP8 (FP8_PARAM_GATHER=True, FP8_PARAMS=True). FP8 attention on the
   * eight-GPU NVFP4 rows only (config_common_fp8attn.sh).
   */
  @Test
  void everyRowIsStatedAsItsConfigRanIt() {
    for (PublicRun r : rows()) {
      assertThat(r.fold()).isEqualTo("mlperf-nvidia");
      assertThat(r.model().seq()).isEqualTo(8192);
      assertThat(r.config().recompute()).isEqualTo(Recompute.NONE);
      assertThat(r.config().zeroStage()).isEqualTo(1);
      assertThat(r.overlaps().bf16GradReduce()).isTrue();
      assertThat(r.overlaps().lossFusion()).isTrue();
      assertThat(r.model().lora().on()).isFalse();
      boolean nvfp4 = r.model().fp8Scaling() == Fp8Scaling.NVFP4;
      assertThat(r.model().lora().fp8Weights()).isEqualTo(!nvfp4);
      if (!nvfp4) {
        assertThat(r.model().fp8Scaling()).isEqualTo(r.cluster().gpu().name().equals("h200-141gb")
            ? Fp8Scaling.DELAYED : Fp8Scaling.TENSORWISE);
      }
      boolean eight = r.cluster().gpuCount() == 8 && nvfp4;
      assertThat(r.kernel()).contains(eight ? AttentionKernel.CUDNN_FP8 : AttentionKernel.CUDNN);
      assertThat(r.figure()).isEqualTo(PublicRun.Figure.TOKENS_PER_GPU);
    }
  }

  /**
   * The layouts and rates: samples over seconds between the logs' train_step_time entries, times
   * 8,192 tokens over the GPUs (the data file's comment lists each sum).
   */
  @Test
  void theRowsAndTheirRates() {
    List<PublicRun> rows = rows();
    String[] clusters = {"1xnvl8:gb200:ib-ndr400", "1xnvl8:gb300:ib-xdr800",
        "1xnvl72:gb200:ib-ndr400", "1xnvl72:gb300:ib-xdr800", "8xnvl64:gb200:ib-ndr400",
        "8xnvl64:gb300:ib-xdr800", "8xnvl64:gb200:ib-ndr400", "8xnvl64:gb300:ib-xdr800",
        "40xnvl64:gb200:ib-ndr400", "80xnvl64:gb200:ib-ndr400", "64x8:h200-141gb:ib-ndr400",
        "128x8:h200-141gb:ib-ndr400", "1x8:b200:ib-ndr400", "1x8:b300:ib-xdr800",
        "2x8:b200:ib-ndr400", "1x8:b300:ib-xdr800"};
    int[][] layouts = {{1, 1, 1, 8, 16}, {1, 1, 1, 8, 16}, {1, 1, 2, 36, 36}, {1, 1, 2, 36, 36},
        {2, 1, 4, 64, 64}, {2, 1, 4, 64, 64}, {4, 8, 2, 8, 1152}, {2, 8, 2, 16, 1152},
        {4, 8, 2, 40, 960}, {4, 8, 2, 80, 1280}, {4, 8, 2, 8, 1152}, {4, 8, 2, 16, 1152},
        {1, 1, 1, 8, 16}, {1, 1, 1, 8, 16}, {1, 1, 1, 16, 32}, {1, 1, 1, 8, 16}};
    double[] rates = {1731072 / 44049.030 * 8192 / 8, 1719296 / 37241.855 * 8192 / 8,
        1643760 / 7811.380 * 8192 / 72, 1643760 / 6748.835 * 8192 / 72,
        1863680 / 2588.025 * 8192 / 512, 1884160 / 2513.848 * 8192 / 512,
        964224 / 14512.434 * 8192 / 512, 964224 / 11009.616 * 8192 / 512,
        970560 / 3239.812 * 8192 / 2560, 989440 / 1729.609 * 8192 / 5120,
        808704 / 35215.525 * 8192 / 512, 808704 / 17898.471 * 8192 / 1024,
        1695744 / 47046.118 * 8192 / 8, 1683968 / 42719.110 * 8192 / 8,
        1884160 / 34864.554 * 8192 / 16, 1566208 / 53606.490 * 8192 / 8};
    for (int i = 0; i < rows.size(); i++) {
      PublicRun r = rows.get(i);
      assertThat(r.cluster().toShortString()).isEqualTo(clusters[i]);
      assertThat(r.config().tensorParallel()).isEqualTo(layouts[i][0]);
      assertThat(r.config().pipelineParallel()).isEqualTo(layouts[i][1]);
      assertThat(r.config().contextParallel()).isEqualTo(layouts[i][2]);
      assertThat(r.config().dataParallel()).isEqualTo(layouts[i][3]);
      assertThat(r.config().globalBatchSize()).isEqualTo(layouts[i][4]);
      assertThat(r.config().sequenceParallel()).isEqualTo(layouts[i][0] > 1);
      assertThat(r.config().virtualStages()).isEqualTo(layouts[i][1] > 1 ? 8 : 1);
      assertThat(r.measured()).as(clusters[i]).isCloseTo(rates[i], within(0.1));
    }
  }

  /**
   * Each fits as it ran. On the 8B rack rows the FP8 weights hold 6,979,321,856 bytes of block
   * projections and (1,050,673,152 + 266,240) x 2 bytes of embedding, head and norms: 8.46 GiB
   * where bf16 weights would take 14.96.
   */
  @Test
  void eachFitsAsItRan() {
    for (PublicRun r : rows()) {
      SimulationResult s = r.simulate(Optional.empty());
      assertThat(s.peakMemoryBytesPerGpu()).as(r.cluster().toShortString() + " " + r.name())
          .isLessThan(r.cluster().gpu().hbmBytes());
    }
    PublicRun rack = rows().get(2);
    SimulationResult s = rack.simulate(Optional.empty());
    assertThat(s.memory().weightsBytes()).isCloseTo(9081200640.0, within(1e6));
  }
}
