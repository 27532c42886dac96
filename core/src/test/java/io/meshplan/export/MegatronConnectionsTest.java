package io.meshplan.export;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.cluster.ClusterSpec;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import org.junit.jupiter.api.Test;

/**
 * Megatron-LM's rule for {@code CUDA_DEVICE_MAX_CONNECTIONS}, restated (NVIDIA/Megatron-LM main at
 * d98e8a6, {@code megatron/training/arguments.py}):
 *
 * <pre>
 * 1453  if (tensor_model_parallel_size > 1 or context_parallel_size > 1)
 * 1454      and get_device_arch_version() < 10:          # 10 is Blackwell
 * 1456      if use_torch_fsdp2 or use_megatron_fsdp: warn only
 * 1477      else: assert CUDA_DEVICE_MAX_CONNECTIONS == "1"
 * 1166  with use_megatron_fsdp: assert CUDA_DEVICE_MAX_CONNECTIONS != "1"
 * </pre>
 *
 * and the exported file sets the variable accordingly.
 */
class MegatronConnectionsTest {
  private static final ClusterSpec B200 = ClusterSpec.parse("128x8:b200:ib-ndr400");
  private static final ClusterSpec V100 = ClusterSpec.parse("128x8:v100-32gb:ib-edr100");

  private static String exported(ExportInput in) {
    return ((ExportResult.Exported) new Exporter().export(ExportTarget.MEGATRON, in)).text();
  }

  @Test
  void tensorParallelBeforeBlackwellExportsOne() {
    // tp 8 on H100 (Hopper, arch 9 < 10), no FSDP: arguments.py:1477 asserts "1".
    ExportInput in = Plans.input(1, Recompute.SELECTIVE, true, true);
    assertThat(MegatronConnections.of(in)).isEqualTo(MegatronConnections.ONE);
    assertThat(exported(in)).contains("\nexport CUDA_DEVICE_MAX_CONNECTIONS=1\n");
    // V100 has no bf16: the same model trained in f16.
    ExportInput volta = new ExportInput(Plans.LLAMA70B.withTraining(Plans.LLAMA70B.batch(),
        io.meshplan.graph.DType.F16), V100, in.config());
    assertThat(MegatronConnections.of(volta)).isEqualTo(MegatronConnections.ONE);
  }

  @Test
  void megatronFsdpRefusesOneEvenWithTensorParallelism() {
    // ZeRO-2 and ZeRO-3 are --use-megatron-fsdp: arguments.py:1166 asserts != "1", and 1456
    // only warns about tp 8 beside it.
    for (int zero : new int[] {2, 3}) {
      ExportInput in = Plans.input(1, Recompute.FULL, true, zero);
      assertThat(MegatronConnections.of(in)).isEqualTo(MegatronConnections.NOT_ONE);
      String text = exported(in);
      assertThat(text).contains("\nunset CUDA_DEVICE_MAX_CONNECTIONS\n")
          .doesNotContain("CUDA_DEVICE_MAX_CONNECTIONS=1");
    }
  }

  @Test
  void noTensorParallelismOrBlackwellAsksNothing() {
    // tp 1 (pp 4 x dp 256 = 1024 GPUs): the condition of arguments.py:1453 is false.
    ParallelConfig tp1 = new ParallelConfig(1, 4, 256, 1, 1, 1024, Recompute.FULL, false, 1);
    ExportInput noTp = new ExportInput(Plans.LLAMA70B, Plans.CLUSTER, tp1);
    assertThat(MegatronConnections.of(noTp)).isEqualTo(MegatronConnections.ANY);
    assertThat(exported(noTp)).doesNotContain("CUDA_DEVICE_MAX_CONNECTIONS");
    // tp 8 on B200 (Blackwell, arch 10): arguments.py:1454 is false.
    ExportInput blackwell = new ExportInput(Plans.LLAMA70B, B200,
        Plans.config(1, Recompute.SELECTIVE, true, true));
    assertThat(MegatronConnections.of(blackwell)).isEqualTo(MegatronConnections.ANY);
    assertThat(exported(blackwell)).doesNotContain("CUDA_DEVICE_MAX_CONNECTIONS");
  }
}
