package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BenchCommandTest {
  @TempDir Path dir;

  private int run(StringWriter out, StringWriter err, String... args) {
    return Main.run(new PrintWriter(out), new PrintWriter(err), args);
  }

  @Test
  void writesScriptAndCommands() throws IOException {
    StringWriter out = new StringWriter();
    int code = run(out, new StringWriter(), "bench", "--cluster", "2x8:h100-80gb", "--launcher",
        "srun", "--out", dir.toString());
    assertThat(code).isEqualTo(ExitCodes.OK);
    // 5 collectives on 1 and 2 nodes
    assertThat(out.toString()).contains("(10 runs)");
    assertThat(Files.readAllLines(dir.resolve("commands.txt"))).hasSize(10);
    assertThat(Files.isExecutable(dir.resolve("run_benchmarks.sh"))).isTrue();
    assertThat(Files.readString(dir.resolve("run_benchmarks.sh")))
        .contains("--nodes=2 --ntasks-per-node=8 --gpus-per-node=8")
        .contains("meshplan calibrate $LOG_DIR/*.log --cluster 2x8:h100-80gb:ib-ndr400");
  }

  @Test
  void printsTheSameScriptTwice() {
    StringWriter a = new StringWriter();
    StringWriter b = new StringWriter();
    run(a, new StringWriter(), "bench", "--cluster", "4x8:a100-80gb");
    run(b, new StringWriter(), "bench", "--cluster", "4x8:a100-80gb");
    assertThat(a.toString()).isEqualTo(b.toString()).contains("mpirun -np 32 ");
  }

  /** One GPU has no collective to time; its five runs of one GPU were written, and refused later. */
  @Test
  void oneGpuIsRefused() {
    StringWriter err = new StringWriter();
    int code = run(new StringWriter(), err, "bench", "--cluster", "1x1:h100-80gb");
    assertThat(code).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(err.toString().strip()).isEqualTo("meshplan: error: --cluster "
        + "1x1:h100-80gb:ib-ndr400 has 1 GPU, and a collective needs 2 or more; give the cluster "
        + "the job runs on");
  }

  @Test
  void unknownLauncherIsBadInput() {
    StringWriter err = new StringWriter();
    int code = run(new StringWriter(), err, "bench", "--cluster", "2x8:h100-80gb", "--launcher",
        "pdsh");
    assertThat(code).isEqualTo(ExitCodes.BAD_INPUT);
    assertThat(err.toString()).contains("'pdsh' is unknown; use mpirun, srun or torchrun");
  }
}
