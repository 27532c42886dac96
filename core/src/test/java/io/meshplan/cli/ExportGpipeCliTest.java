package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code export --schedule gpipe}: Megatron-LM ({@code megatron/core/pipeline_parallel/
 * schedules.py}, {@code get_forward_backward_func}: no pipelining, 1F1B, interleaved 1F1B) and
 * DeepSpeed ({@code deepspeed/runtime/pipe/schedule.py}, {@code TrainSchedule}: 1F1B) have no GPipe
 * schedule, so the export exits 3 with the same configuration under 1F1B as the nearest;
 * torchtitan names PyTorch's {@code GPipe} schedule.
 */
class ExportGpipeCliTest {
  private static final String[] FLAGS = {"--model", "llama2-70b", "--dtype", "bf16", "--seq",
      "4096", "--cluster", "128x8:h100-80gb:ib-ndr400", "--tp", "8", "--pp", "4", "--dp", "32",
      "--micro-batch", "1", "--global-batch", "1024", "--recompute", "full",
      "--sequence-parallel", "--distributed-optimizer", "--overlap-grad-reduce"};

  private static CliRun export(String to, boolean gpipe, String... more) {
    List<String> a = new ArrayList<>(List.of("export", "--to", to));
    a.addAll(List.of(FLAGS));
    if (to.equals("torchtitan")) {
      // torchtitan has llama3 flavors only: the same layout on Llama 3 70B.
      a.set(a.indexOf("llama2-70b"), "llama3.1-70b");
    }
    if (gpipe) {
      a.addAll(List.of("--schedule", "gpipe"));
    }
    a.addAll(List.of(more));
    return CliRun.of(a.toArray(String[]::new));
  }

  @Test
  void megatronAndDeepSpeedRefuseGpipeWithTheSameConfigurationIn1F1B() {
    for (String to : List.of("megatron", "deepspeed")) {
      CliRun r = export(to, true);
      assertThat(r.code()).as(r.err()).isEqualTo(3);
      assertThat(r.err().strip()).doesNotContain("\n").contains("has no GPipe schedule");
      String nearest = r.nearestExport();
      assertThat(nearest).doesNotContain("--schedule")
          .contains("--tp 8 --pp 4 --dp 32", "--micro-batch 1 --global-batch 1024",
              "--recompute full --sequence-parallel --distributed-optimizer");
      assertThat(export(to, false).code()).isZero();
    }
  }

  @Test
  void torchtitanWritesPyTorchsGpipeSchedule() {
    CliRun r = export("torchtitan", true);
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("config.parallelism.pipeline_parallel_schedule = \"GPipe\"\n");
    assertThat(export("torchtitan", false).out())
        .contains("config.parallelism.pipeline_parallel_schedule = \"1F1B\"\n");
    CliRun v022 = export("torchtitan", true, "--framework-version", "0.2.2");
    assertThat(v022.code()).as(v022.err()).isZero();
    assertThat(v022.out()).contains("pipeline_parallel_schedule = 'GPipe'");
    assertThat(export("torchtitan", false, "--framework-version", "0.2.2").out())
        .contains("pipeline_parallel_schedule = '1F1B'");
  }
}
