package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.meshplan.sim.MemoryFit;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code simulate} says whether a configuration fits in a GPU's memory, by the rule {@code plan}
 * applies, and {@code export} refuses one that does not.
 */
class SimulateFitsCliTest {
  /**
   * LLaMA2-70B with tp 8 alone on 8 A100-80GB: every GPU holds an eighth of 70B parameters'
   * 18 bytes of model state, about 145 GiB, plus activations: it cannot fit.
   */
  private static final String[] TOO_BIG = {"--model", "llama2-70b", "--cluster",
      "1x8:a100-80gb", "--tp", "8", "--pp", "1", "--dp", "1", "--micro-batch", "1",
      "--global-batch", "8"};

  /** 0.95 x 80 GiB: what a plan may use on an A100-80GB, bytes. */
  private static final long A100_80_USABLE = Math.round(0.95 * 80 * 1024 * 1024 * 1024);

  @TempDir Path dir;

  private static String[] with(String first, String... rest) {
    List<String> out = new ArrayList<>(List.of(first));
    out.addAll(List.of(rest));
    return out.toArray(String[]::new);
  }

  private static String[] concat(String[] a, String... b) {
    List<String> out = new ArrayList<>(List.of(a));
    out.addAll(List.of(b));
    return out.toArray(String[]::new);
  }

  @Test
  void aConfigurationThatDoesNotFitPrintsEveryFigureAndExits3() {
    CliRun r = CliRun.of(with("simulate", TOO_BIG));
    assertThat(r.code()).isEqualTo(ExitCodes.INFEASIBLE);
    // The figures are all there: 152.65 GiB = 16.92 + 32.12 + 96.36 + 7.03 + 0.22.
    assertThat(r.out()).contains("iteration ", "peak memory per GPU (stage 0): 152.65 GiB",
        "communication per GPU", "stage  chunks");
    // 152.65 GiB shown to three digits; 0.95 x 80 GiB = 76 GiB.
    assertThat(r.out()).contains("does not fit: stage 0 needs 153GiB per GPU, and 76GiB is"
        + " available\n");
    assertThat(r.err().lines()).containsExactly("meshplan: infeasible: llama2-70b does not fit on"
        + " 1x8:a100-80gb:ib-hdr200: stage 0 needs 153GiB per GPU, and 76GiB is available (plan"
        + " it with 'meshplan plan', or use more GPUs, a smaller micro batch or recomputation)");
  }

  @Test
  void theJsonCarriesTheVerdictAfterTheFieldsItHadBefore() throws Exception {
    CliRun r = CliRun.of(concat(with("simulate", TOO_BIG), "--json"));
    assertThat(r.code()).isEqualTo(ExitCodes.INFEASIBLE);
    JsonNode j = new ObjectMapper().readTree(r.out());
    List<String> names = new ArrayList<>();
    j.fieldNames().forEachRemaining(names::add);
    assertThat(names).startsWith("schedule", "microbatches", "iterationSeconds");
    assertThat(names.get(names.size() - 1)).isEqualTo("fits");
    JsonNode f = j.get("fits");
    assertThat(f.get("fits").booleanValue()).isFalse();
    assertThat(f.get("needBytes").longValue()).isEqualTo(j.get("peakMemoryBytesPerGpu")
        .longValue());
    assertThat(f.get("capacityBytes").longValue()).isEqualTo(A100_80_USABLE);
    assertThat(f.get("stage").intValue()).isEqualTo(j.get("memoryStage").intValue()).isZero();
  }

  @Test
  void aConfigurationThatFitsSaysSoAndExits0() throws Exception {
    // GPT 1.7B data-parallel on 32 A100-80GB (the README's Table 1 row): 31.26 GiB of 76 GiB.
    String[] fits = {"simulate", "--model", "gpt-1.7b", "--cluster", "4x8:a100-80gb", "--tp",
        "1", "--pp", "1", "--dp", "32", "--micro-batch", "1", "--global-batch", "512",
        "--recompute", "full", "--dtype", "f16", "--attention", "unfused"};
    CliRun r = CliRun.of(fits);
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("fits: stage 0 needs 31.3GiB per GPU, and 76GiB is available");
    JsonNode f = new ObjectMapper().readTree(CliRun.of(concat(fits, "--json")).out()).get("fits");
    assertThat(f.get("fits").booleanValue()).isTrue();
    // --memory is the capacity, as for plan: 30 GiB is below the 31.26 GiB peak.
    CliRun small = CliRun.of(concat(fits, "--memory", "30GiB"));
    assertThat(small.code()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(small.err()).contains("stage 0 needs 31.3GiB per GPU, and 30GiB is available");
  }

  @Test
  void exportRefusesWhatDoesNotFitAndWritesNothing() {
    Path out = dir.resolve("args.sh");
    CliRun r = CliRun.of(concat(with("export", TOO_BIG), "--to", "megatron", "--out",
        out.toString()));
    r.refusedInOneLine(ExitCodes.INFEASIBLE, "llama2-70b does not fit on 1x8:a100-80gb:ib-hdr200:"
        + " stage 0 needs 153GiB per GPU, and 76GiB is available");
    assertThat(out).doesNotExist();
  }

  @Test
  void exportOfAPlanFitsOrNotAsItsSimulation() throws Exception {
    Path plan = dir.resolve("grid.json");
    CliRun p = CliRun.of("plan", "--model", "gpt-1.7b", "--cluster", "1x8:a100-80gb",
        "--global-batch", "16", "--megatron-grid", "--out", plan.toString());
    assertThat(p.code()).as(p.err()).isZero();
    String saved = Files.readString(plan);
    CliRun sim = CliRun.of("simulate", "--plan", plan.toString());
    assertThat(sim.code()).as(sim.err()).isZero();
    assertThat(sim.out()).contains("fits: stage ");
    CliRun ok = CliRun.of("export", "--to", "megatron", "--plan", plan.toString());
    assertThat(ok.code()).as(ok.err()).isZero();
    // The same plan with 1 GiB per GPU: its simulated peak (about 21.5 GiB) does not fit.
    CliRun no = CliRun.of("export", "--to", "megatron", "--plan", plan.toString(), "--memory",
        "1GiB");
    no.refusedInOneLine(ExitCodes.INFEASIBLE, "gpt-1.7b does not fit on 1x8:a100-80gb:ib-hdr200:"
        + " stage 0 needs ");
    assertThat(no.err()).contains(" per GPU, and 1GiB is available");
    assertThat(Files.readString(plan)).isEqualTo(saved);
  }

  @Test
  void theRuleIsThePlannersAtItsEdge() {
    // A peak equal to the capacity fits, as the planners keep a candidate whose peak is at
    // most the memory per GPU; one ulp more does not.
    double cap = A100_80_USABLE;
    assertThat(new MemoryFit(cap, cap, 0).fits()).isTrue();
    assertThat(new MemoryFit(Math.nextUp(cap), cap, 2).fits()).isFalse();
    // 80 GiB against 0.95 x 80 = 76 GiB.
    assertThat(new MemoryFit(80.0 * (1 << 30), cap, 2).words())
        .isEqualTo("stage 2 needs 80GiB per GPU, and 76GiB is available");
  }
}
