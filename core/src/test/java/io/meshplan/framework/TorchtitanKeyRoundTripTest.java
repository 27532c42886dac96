package io.meshplan.framework;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.calibrate.RunParallel;
import io.meshplan.calibrate.TrainingLogs;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.export.ExportInput;
import io.meshplan.export.ExportResult;
import io.meshplan.export.ExportTarget;
import io.meshplan.export.Exporter;
import io.meshplan.graph.DType;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * torchtitan's TOML keys are one table ({@link TorchtitanKey}) for the v0.2.2 export that writes
 * them and the reader of {@code calibrate --train --config} that reads them: the job TOML the
 * export writes, given with a torchtitan log, is read back as the layout exported.
 */
class TorchtitanKeyRoundTripTest {
  @TempDir Path dir;

  @Test
  void theExportedJobTomlIsReadBackAsTheSameLayout() throws Exception {
    ModelSpec m = Presets.get("llama3.1-8b").withTraining(1, DType.BF16);
    ClusterSpec cluster = ClusterSpec.parse("2x8:h100-80gb:ib-ndr400");
    int[][] layouts = {{1, 1, 16, 3}, {2, 1, 8, 3}, {2, 2, 4, 1}, {1, 2, 8, 1}};
    for (int[] l : layouts) {
      // Without a pipeline, one microbatch per rank and step: calibrate reads the local batch
      // (training.local_batch_size) and not training.global_batch_size, so a run with gradient
      // accumulation would be read as its local batch (left as found; see the report).
      int global = l[1] > 1 ? 8 * l[2] * l[1] : l[2];
      // torchtitan runs sequence parallelism whenever it splits tensors.
      ParallelConfig c = new ParallelConfig(l[0], l[1], l[2], 1, 1, global, Recompute.FULL,
          l[0] > 1, l[3]);
      ExportResult r = new Exporter().export(ExportTarget.TORCHTITAN_V022,
          new ExportInput(m, cluster, c));
      assertThat(r).as(c.toString()).isInstanceOf(ExportResult.Exported.class);
      Path toml = Files.writeString(dir.resolve("job.toml"), ((ExportResult.Exported) r).text());
      // The log as the 16-GPU run of this layout prints its mesh and global batch.
      RunParallel p = TrainingLogs.read(io.meshplan.calibrate.TitanLogs.of(dir, 16, global),
          Optional.of(toml)).parallel();
      assertThat(p.tensorParallel()).as(c.toString()).isEqualTo(c.tensorParallel());
      assertThat(p.pipelineParallel()).as(c.toString()).isEqualTo(c.pipelineParallel());
      assertThat(p.dataParallel()).as(c.toString()).isEqualTo(c.dataParallel());
      assertThat(p.localBatch() * c.dataParallel()).as(c.toString())
          .isEqualTo(c.globalBatchSize());
      assertThat(p.recompute()).as(c.toString()).isEqualTo("full");
    }
    assertThat(TorchtitanKey.TENSOR_PARALLEL_DEGREE.path())
        .isEqualTo("parallelism.tensor_parallel_degree");
  }
}
