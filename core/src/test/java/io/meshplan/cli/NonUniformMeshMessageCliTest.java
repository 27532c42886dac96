package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A plan whose stages differ only in their expert parallelism is refused by the Megatron export
 * with two meshes that read differently: the expert (and context) parallel sizes are named, not
 * only data x tensor parallel, which alone would print the same twice.
 */
class NonUniformMeshMessageCliTest {
  @TempDir Path dir;

  @Test
  void theTwoMeshesAreToldApart() {
    Path plan = dir.resolve("plan.json");
    CliRun p = CliRun.of("plan", "--model", "qwen3-30b-a3b", "--seq", "8192", "--cluster",
        "4x8:h100-80gb",
        "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    CliRun e = CliRun.of("export", "--plan", plan.toString(), "--to", "megatron");
    Matcher m = Pattern.compile("different logical meshes \\(([^)]*) and ([^)]*)\\)")
        .matcher(e.err() + e.out());
    // Today's plan at 8,192 tokens gives its first stage EP 4 and the next EP 2, both on an 8 x 1
    // mesh, which "8x1" alone would print twice.
    assertThat(m.find()).as(e.err()).isTrue();
    assertThat(e.code()).isEqualTo(3);
    assertThat(m.group(1)).isEqualTo("8x1 EP 4");
    assertThat(m.group(2)).isEqualTo("8x1 EP 2");
    assertThat(e.err()).contains("one tensor, data, expert and context-parallel size");
  }
}
