package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code --recompute-modules} on simulate and export, with Megatron-Core's rules for it ({@code
 * TransformerConfig.__post_init__} at d98e8a6) restated as cases.
 */
class RecomputeModulesCliTest {
  /** Mixtral cut to 4 blocks and h 1024 on one node: PP 2, EP 4, 8 microbatches. */
  private static final String[] MIXTRAL = {"--model", "mixtral-8x7b", "--layers", "4", "--hidden",
      "1024", "--heads", "8", "--kv-heads", "8", "--ffn", "2048", "--seq", "1024", "--cluster",
      "1x8:h100-80gb", "--tp", "1", "--pp", "2", "--dp", "4", "--ep", "4", "--micro-batch", "1",
      "--global-batch", "32", "--distributed-optimizer"};

  private static CliRun run(String command, String... more) {
    List<String> a = new ArrayList<>(List.of(command));
    a.addAll(Arrays.asList(MIXTRAL));
    a.addAll(Arrays.asList(more));
    return CliRun.of(a.toArray(String[]::new));
  }

  private static double number(String out, String before) {
    String rest = out.substring(out.indexOf(before) + before.length()).trim();
    return Double.parseDouble(rest.substring(0, rest.indexOf(' ')));
  }

  @Test
  void theExpertsActivationAndNormsAreRecomputedInsteadOfKept() {
    CliRun core = run("simulate", "--recompute", "selective");
    CliRun more = run("simulate", "--recompute", "selective", "--recompute-modules",
        "core_attn,moe_act,layernorm");
    assertThat(core.code()).as(core.err()).isZero();
    assertThat(more.code()).as(more.err()).isZero();
    // Less kept, more time: the dropped values are computed again in the backward pass.
    assertThat(number(more.out(), "+ activations")).isLessThan(number(core.out(),
        "+ activations"));
    assertThat(number(more.out(), "iteration")).isGreaterThan(number(core.out(), "iteration"));
  }

  @Test
  void megatronExportWritesTheModulesAndResimulatesToTheSameIteration() {
    CliRun sim = run("simulate", "--recompute", "selective", "--recompute-modules",
        "moe_act,layernorm");
    CliRun r = run("export", "--to", "megatron", "--recompute", "selective",
        "--recompute-modules", "moe_act,layernorm");
    assertThat(r.code()).as(r.err()).isZero();
    // argument_utils.py turns TransformerConfig's List[str] into nargs '+': names one after another.
    assertThat(r.out()).contains("  --recompute-granularity selective\n"
        + "  --recompute-modules moe_act layernorm\n");
    String modules = r.out().lines().filter(l -> l.contains("--recompute-modules"))
        .findFirst().orElseThrow().trim().substring("--recompute-modules ".length())
        .replace(' ', ',');
    CliRun again = run("simulate", "--recompute", "selective", "--recompute-modules", modules);
    assertThat(ExportRoundTripCliTest.line(again.out()))
        .isEqualTo(ExportRoundTripCliTest.line(sim.out()));
  }

  @Test
  void frameworksWithoutAModuleListRefuseInOneLine() {
    CliRun r = run("export", "--to", "deepspeed", "--recompute", "selective",
        "--recompute-modules", "moe_act");
    assertThat(r.code()).isEqualTo(ExitCodes.INFEASIBLE);
    assertThat(r.err().strip().lines()).hasSize(1);
  }

  @Test
  void megatronsRulesRefuseInOneLine() {
    run("simulate", "--recompute-modules", "moe_act").refusedInOneLine(ExitCodes.BAD_INPUT,
        "--recompute-modules needs --recompute selective");
    run("simulate", "--recompute", "selective", "--recompute-modules", "moe_act,attention")
        .refusedInOneLine(ExitCodes.BAD_INPUT, "'attention' is not a module meshplan recomputes");
    run("simulate", "--recompute", "selective", "--recompute-modules", " , ")
        .refusedInOneLine(ExitCodes.BAD_INPUT, "names no module");
    run("simulate", "--recompute", "selective", "--recompute-modules", "mla_up_proj")
        .refusedInOneLine(ExitCodes.BAD_INPUT, "mla_up_proj needs multi-head latent attention");
    run("simulate", "--recompute", "selective", "--recompute-modules", "layernorm", "--dtype",
        "fp8").refusedInOneLine(ExitCodes.BAD_INPUT, "does not run with FP8's delayed scaling");
    CliRun.of("simulate", "--model", "llama3-8b", "--seq", "1024", "--cluster", "1x8:h100-80gb",
        "--tp", "1", "--pp", "1", "--dp", "8", "--micro-batch", "1", "--global-batch", "8",
        "--recompute", "selective", "--recompute-modules", "moe_act")
        .refusedInOneLine(ExitCodes.BAD_INPUT, "moe_act needs a mixture-of-experts model");
  }

  /**
   * Flags that used to change nothing, silently: the default module named without selective
   * recomputation, MoE-only modules on a dense model or a model without shared experts, more
   * recomputed layers than a chunk holds (priced as the chunk's 2 here, and written to Megatron-LM
   * as given), and the FSDP prefetch switch below ZeRO-2, which has no prefetch.
   */
  @Test
  void flagsThatWouldChangeNothingAreRefusedInOneLine() {
    for (String mode : new String[] {"none", "full"}) {
      run("simulate", "--recompute", mode, "--recompute-modules", "core_attn")
          .refusedInOneLine(ExitCodes.BAD_INPUT, "--recompute-modules needs --recompute selective");
    }
    run("simulate", "--recompute-modules", "core_attn").refusedInOneLine(ExitCodes.BAD_INPUT,
        "--recompute-modules needs --recompute selective");
    // Mixtral has no shared experts.
    run("simulate", "--recompute", "selective", "--recompute-modules", "shared_experts")
        .refusedInOneLine(ExitCodes.BAD_INPUT,
            "--recompute-modules shared_experts needs a model with shared experts; mixtral-8x7b"
                + " has none");
    String[] dense = {"--model", "llama3-8b", "--seq", "1024", "--cluster", "1x8:h100-80gb",
        "--tp", "1", "--pp", "2", "--dp", "4", "--micro-batch", "1", "--global-batch", "8"};
    List<String> moe = new ArrayList<>(List.of("simulate"));
    moe.addAll(Arrays.asList(dense));
    moe.addAll(List.of("--recompute", "selective", "--recompute-modules", "moe"));
    CliRun.of(moe.toArray(String[]::new)).refusedInOneLine(ExitCodes.BAD_INPUT,
        "--recompute-modules moe needs a mixture-of-experts model; this model is dense");
    // 4 blocks over 2 stages: 2 a chunk, so 3 is refused wherever the flags are read.
    for (String command : new String[] {"simulate", "export"}) {
      List<String> a = new ArrayList<>(List.of(command));
      if (command.equals("export")) {
        a.addAll(List.of("--to", "megatron"));
      }
      a.addAll(Arrays.asList(MIXTRAL));
      a.addAll(List.of("--recompute", "full", "--recompute-num-layers", "3"));
      CliRun.of(a.toArray(String[]::new)).refusedInOneLine(ExitCodes.BAD_INPUT,
          "--recompute-num-layers 3 is more than the 2 layers of a model chunk (the first N"
              + " layers of each chunk are recomputed); give at most 2");
    }
    CliRun two = run("simulate", "--recompute", "full", "--recompute-num-layers", "2");
    assertThat(two.code()).as(two.err()).isZero();
    // --distributed-optimizer is ZeRO-1: no per-layer gather to prefetch.
    run("simulate", "--no-fsdp-prefetch").refusedInOneLine(ExitCodes.BAD_INPUT,
        "--no-fsdp-prefetch times ZeRO-2's and ZeRO-3's per-layer gathers and reduce-scatters;"
            + " give --zero-stage 2 or 3, or drop it");
  }
}
