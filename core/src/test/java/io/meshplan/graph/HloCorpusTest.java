package io.meshplan.graph;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class HloCorpusTest {
  static List<String> corpus() {
    return HloCorpus.NAMES;
  }

  @ParameterizedTest
  @MethodSource("corpus")
  void parsePrintParseGivesTheSameModule(String name) {
    HloModule first = HloCorpus.parse(name);
    String printed = new HloPrinter().print(first);
    HloModule second = new HloParser().parse(printed, "printed-" + name);

    assertThat(second.name()).isEqualTo(first.name());
    assertThat(second.headerAttributes()).isEqualTo(first.headerAttributes());
    // Graph and Instruction are records: this compares names, opcodes, shapes, operands,
    // typed attributes, op_names, raw attributes and aliases of every computation.
    assertThat(second.computations()).isEqualTo(first.computations());
    assertThat(second.aliasKinds()).isEqualTo(first.aliasKinds());
    assertThat(second.extraAliasEntries()).isEqualTo(first.extraAliasEntries());
    assertThat(new HloPrinter().print(second)).isEqualTo(printed);
  }

  @ParameterizedTest
  @MethodSource("corpus")
  void everyEntryIsTopologicalWithTheRootLast(String name) {
    for (HloComputation c : HloCorpus.parse(name).computations()) {
      for (Instruction ins : c.graph().instructions()) {
        assertThat(ins.operands()).allMatch(op -> op < ins.id());
      }
    }
  }

  @Test
  void mlpTrainStepKeepsAliasesLayoutsReducersAndScopes() {
    HloModule m = HloCorpus.parse("mlp_train_step.hlo");
    Graph g = m.entry();
    assertThat(m.computations()).hasSize(3);
    assertThat(g.name()).isEqualTo("main.80");
    assertThat(g.instructions()).filteredOn(i -> i.opcode() == Opcode.PARAMETER).hasSize(6);
    assertThat(g.instructions()).filteredOn(i -> i.opcode() == Opcode.DOT).hasSize(5);
    // output {k} is operand k of the root tuple: Arg_0.1 -> subtract.54, ... Arg_3.4 -> subtract.63
    assertThat(g.aliases()).containsExactly(
        new AliasPair(HloCorpus.named(g, "Arg_0.1").id(), HloCorpus.named(g, "subtract.54").id()),
        new AliasPair(HloCorpus.named(g, "Arg_1.2").id(), HloCorpus.named(g, "subtract.57").id()),
        new AliasPair(HloCorpus.named(g, "Arg_2.3").id(), HloCorpus.named(g, "subtract.60").id()),
        new AliasPair(HloCorpus.named(g, "Arg_3.4").id(), HloCorpus.named(g, "subtract.63").id()));
    Instruction reduce = HloCorpus.named(g, "reduce.25");
    assertThat(reduce.operands()).containsExactly(HloCorpus.named(g, "multiply.17").id(),
        HloCorpus.named(g, "constant.20").id());
    assertThat(reduce.attrs()).isEqualTo(new OpAttrs.Dims(List.of(0, 1)));
    assertThat(reduce.rawAttributes()).containsEntry("to_apply", "%region_0.21");
    Instruction dot = HloCorpus.named(g, "dot.32");
    assertThat(dot.attrs()).isEqualTo(
        new OpAttrs.Dot(List.of(), List.of(0), List.of(), List.of(0)));
    assertThat(dot.opName()).startsWith("jit(train_step)/jit(main)/transpose(jvp(MLP))/layers_1/");
    assertThat(HloCorpus.named(g, "Arg_0.1").opName()).isEqualTo("params['layers_0']['kernel']");
    assertThat(HloCorpus.named(g, "compare.46").attrs()).isEqualTo(new OpAttrs.Compare("GT"));
    assertThat(HloCorpus.named(g, "Arg_4.5").attrs()).isEqualTo(new OpAttrs.Index(4));
    assertThat(HloCorpus.named(g, "constant.26").attrs())
        .isEqualTo(new OpAttrs.Literal("0.000244140625"));
    assertThat(m.entryComputation().shapeText(HloCorpus.named(g, "transpose.31").id()))
        .isEqualTo("f32[128,32]{0,1}");
    assertThat(g.root().opcode()).isEqualTo(Opcode.TUPLE);
    assertThat(m.warnings()).isEmpty();
    String printed = new HloPrinter().print(m);
    assertThat(printed).contains("input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, "
        + "may-alias), {2}: (2, {}, may-alias), {3}: (3, {}, may-alias) }");
    assertThat(printed).contains("  %dot.7 = f32[32,256]{1,0} dot(%Arg_4.5, %Arg_0.1), "
        + "lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_type=\"dot_general\"");
  }

  @Test
  void attentionDotsKeepBatchDimensions() {
    Graph g = HloCorpus.parse("attention_forward.hlo").entry();
    assertThat(HloCorpus.named(g, "dot.11").attrs())
        .isEqualTo(new OpAttrs.Dot(List.of(0, 2), List.of(3), List.of(0, 2), List.of(3)));
    assertThat(HloCorpus.named(g, "slice.6").attrs()).isEqualTo(new OpAttrs.Slice(
        List.of(0, 0, 512), List.of(4, 128, 1024), List.of(1, 1, 1)));
    assertThat(HloCorpus.named(g, "transpose.49").attrs())
        .isEqualTo(new OpAttrs.Dims(List.of(0, 2, 1, 3)));
    assertThat(HloCorpus.named(g, "dot.11").tensorShape())
        .isEqualTo(TensorShape.of(DType.BF16, 4, 8, 128, 128));
  }

  @Test
  void bareNamesAndComputationsWithoutSignatureAreRead() {
    HloModule m = HloCorpus.parse("layer_norm.hlo");
    assertThat(m.entry().name()).isEqualTo("main.45");
    assertThat(m.computation("region_0.9").graph().root().opcode()).isEqualTo(Opcode.ADD);
    assertThat(m.entry().root().name()).isEqualTo("add.31");
    assertThat(new HloPrinter().print(m))
        .contains("ENTRY %main.45 (Arg_0.1: f32[8,1024,768]{2,1,0}, Arg_1.2: f32[768]{0}, "
            + "Arg_2.3: f32[768]{0}) -> f32[8,1024,768]{2,1,0} {");
  }

  @Test
  void fusionsKeepTheirComputationsAndJsonBackendConfig() {
    HloModule m = HloCorpus.parse("softmax_fused.hlo");
    Graph g = m.entry();
    Instruction f = HloCorpus.named(g, "multi_output_fusion");
    assertThat(f.opcode()).isEqualTo(Opcode.FUSION);
    assertThat(f.shape()).isInstanceOf(TupleShape.class);
    assertThat(f.rawAttributes().keySet())
        .containsExactly("kind", "calls", "metadata", "backend_config");
    assertThat(f.rawAttributes().get("backend_config"))
        .isEqualTo("\"{\\\"operation_queue_id\\\":\\\"0\\\",\\\"wait_on_operation_queues\\\":[]}\"");
    assertThat(m.computation("fused_exp_sum").graph().root().opcode()).isEqualTo(Opcode.TUPLE);
    // fused_divide lists parameter 1 before parameter 0; the signature prints by number
    assertThat(new HloPrinter().print(m)).contains(
        "%fused_divide (param_0.9: f32[64]{0}, param_1.11: f32[64,4096]{1,0}) -> f32[64,4096]{1,0}");
    assertThat(HloCorpus.named(g, "get-tuple-element.2").attrs()).isEqualTo(new OpAttrs.Index(1));
  }

  @Test
  void whileLoopKeepsConditionAndBody() {
    HloModule m = HloCorpus.parse("while_loop.hlo");
    Instruction w = HloCorpus.named(m.entry(), "while.27");
    assertThat(w.opcode()).isEqualTo(Opcode.WHILE);
    assertThat(w.rawAttributes()).containsEntry("condition", "%while_cond")
        .containsEntry("body", "%while_body");
    assertThat(m.computation("while_cond").graph().root().attrs())
        .isEqualTo(new OpAttrs.Compare("LT"));
    assertThat(m.computation("while_body").graph().get(0).shape().toHlo())
        .isEqualTo("(s32[], f32[16,256], f32[4,256,256])");
  }

  @Test
  void bigConstantsAreElidedAndSmallOnesKept() {
    String text = HloCorpus.text("big_constant.hlo");
    assertThat(text.length()).isGreaterThan(20_000);
    Graph g = HloCorpus.parse("big_constant.hlo").entry();
    assertThat(HloCorpus.named(g, "constant.3").attrs()).isEqualTo(new OpAttrs.Literal("{...}"));
    assertThat(HloCorpus.named(g, "constant.4").attrs())
        .isEqualTo(new OpAttrs.Literal("{0, 1, 2, 3}"));
    assertThat(HloCorpus.named(g, "constant.5").attrs())
        .isEqualTo(new OpAttrs.Literal("{ { 1, 2 }, { 3, 4 } }"));
    assertThat(HloCorpus.named(g, "slice.12").attrs())
        .isEqualTo(new OpAttrs.Slice(List.of(0), List.of(64), List.of(2)));
    Graph full = new HloParser(100_000).parse(text, "big_constant.hlo").entry();
    assertThat(((OpAttrs.Literal) HloCorpus.named(full, "constant.3").attrs()).literal())
        .startsWith("{ { 0, 0.04207355,").hasSizeGreaterThan(20_000);
  }

  @Test
  void shardingCustomCallBecomesForceReplicatedOnlyWhenReplicated() {
    HloModule m = HloCorpus.parse("custom_calls.hlo");
    Graph g = m.entry();
    assertThat(HloCorpus.named(g, "custom-call.3").opcode()).isEqualTo(Opcode.FORCE_REPLICATED);
    assertThat(HloCorpus.named(g, "custom-call.4").opcode()).isEqualTo(Opcode.CUSTOM_CALL);
    assertThat(HloCorpus.named(g, "custom-call.8").rawAttributes())
        .containsEntry("frontend_attributes", "{_xla_compute_type=\"host\",_xla_stream_annotation=\"1\"}");
    assertThat(HloCorpus.named(g, "Arg_0.1").rawAttributes())
        .containsEntry("sharding", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
    assertThat(g.aliases()).containsExactly(new AliasPair(0, HloCorpus.named(g, "multiply.12").id()));
    assertThat(m.aliasKinds()).containsEntry(0, "must-alias");
    String printed = new HloPrinter().print(m);
    assertThat(printed).contains("input_output_alias={ {0}: (0, {}, must-alias) }")
        .contains("%custom-call.3 = f32[1024,1024]{1,0} custom-call(%Arg_0.1), "
            + "custom_call_target=\"Sharding\", sharding={replicated}, metadata=");
  }

  @Test
  void collectivesOutOfOrderOperandsAndUnknownOpcodes() {
    HloModule m = HloCorpus.parse("spmd_collectives.hlo");
    Graph g = m.entry();
    Instruction pad = HloCorpus.named(g, "pad.5");
    Instruction constant = HloCorpus.named(g, "constant.6");
    assertThat(constant.id()).isLessThan(pad.id());
    assertThat(pad.operands()).containsExactly(HloCorpus.named(g, "transpose.4").id(),
        constant.id());
    assertThat(HloCorpus.named(g, "all-gather").opcode()).isEqualTo(Opcode.ALL_GATHER);
    assertThat(HloCorpus.named(g, "all-reduce").opcode()).isEqualTo(Opcode.ALL_REDUCE);
    assertThat(HloCorpus.named(g, "reduce-scatter").rawAttributes())
        .containsEntry("replica_groups", "[2,2]<=[4]");
    Instruction start = HloCorpus.named(g, "all-reduce-start");
    assertThat(start.opcode()).isEqualTo(Opcode.UNKNOWN);
    assertThat(start.opcode().kind()).isEqualTo(OpKind.OPAQUE);
    assertThat(start.rawAttributes()).containsEntry(HloModule.OPCODE_KEY, "all-reduce-start");
    assertThat(m.warnings()).containsExactly(
        "spmd_collectives.hlo:25:40: unknown opcode 'all-reduce-start' read as an opaque"
            + " instruction (1 use)",
        "spmd_collectives.hlo:26:39: unknown opcode 'all-reduce-done' read as an opaque"
            + " instruction (1 use)");
    assertThat(new HloPrinter().print(m))
        .contains("%all-reduce-done = f32[64,256]{1,0} all-reduce-done(%all-reduce-start)\n");
  }

  @Test
  void rootFirstInTheFileEndsUpLast() {
    HloModule m = HloCorpus.parse("torch_xla_linear.hlo");
    Graph g = m.entry();
    assertThat(g.root().name()).isEqualTo("tuple.41");
    assertThat(g.get(0).name()).isEqualTo("p3.4");
    assertThat(HloCorpus.named(g, "tuple.31").id()).isEqualTo(g.size() - 2);
    assertThat(g.aliases()).containsExactly(new AliasPair(HloCorpus.named(g, "p2.3").id(),
        HloCorpus.named(g, "subtract.30").id()));
    assertThat(HloCorpus.named(g, "dot.6").rawAttributes())
        .containsEntry("operand_precision", "{highest,highest}");
  }

  @Test
  void controlFlowReferencesAndUnknownOpsInNonEntryComputations() {
    HloModule m = HloCorpus.parse("control_flow.hlo");
    Graph g = m.entry();
    assertThat(HloCorpus.named(g, "conditional.8").rawAttributes())
        .containsEntry("branch_computations", "{%false_branch, %true_branch}");
    assertThat(HloCorpus.named(g, "opt-barrier.18").opcode())
        .isEqualTo(Opcode.OPTIMIZATION_BARRIER);
    assertThat(HloCorpus.named(g, "exp-ish.22").opcode()).isEqualTo(Opcode.ERF);
    assertThat(HloCorpus.named(g, "after-all.17").tensorShape())
        .isEqualTo(TensorShape.of(DType.TOKEN));
    assertThat(m.computation("helper").graph().root().opcode()).isEqualTo(Opcode.UNKNOWN);
    assertThat(m.computation("helper").trailer()).isEqualTo(", execution_thread=\"host\"");
    assertThat(m.warnings()).singleElement().asString()
        .startsWith("control_flow.hlo:27:38:").contains("unknown opcode 'cholesky'");
  }

  @Test
  void undefinedComputationReferencesAreWarnings() {
    String text = "HloModule m\nENTRY %e (p: f32[]) -> f32[] {\n"
        + "  ROOT %p = f32[] parameter(0), to_apply=%missing\n}\n";
    HloModule m = new HloParser().parse(text, "m.hlo");
    assertThat(m.warnings()).containsExactly(
        "m.hlo:3:42: computation 'missing' is not defined in the module");
  }

  @Test
  void printerSetsShardingsOnEntryInstructions() {
    HloModule m = HloCorpus.parse("mlp_train_step.hlo");
    Graph g = m.entry();
    int dot = HloCorpus.named(g, "dot.7").id();
    int arg = HloCorpus.named(g, "Arg_0.1").id();
    String printed = HloPrinter.withShardings(Map.of(dot, "{devices=[2,1,2]0,1,2,3 "
        + "last_tile_dim_replicate}", arg, "{devices=[1,4]0,1,2,3}")).print(m);
    Graph back = new HloParser().parse(printed, "sharded.hlo").entry();
    assertThat(back.get(dot).rawAttributes())
        .containsEntry("sharding", "{devices=[2,1,2]0,1,2,3 last_tile_dim_replicate}");
    assertThat(List.copyOf(back.get(arg).rawAttributes().keySet()))
        .containsExactly("sharding", "metadata");
    assertThat(back.get(arg).rawAttributes()).containsEntry("sharding", "{devices=[1,4]0,1,2,3}");
    assertThat(HloCorpus.named(back, "Arg_1.2").rawAttributes())
        .containsEntry("sharding", "{replicated}");
    // non-entry computations are never touched
    assertThat(back.name()).isEqualTo(g.name());
  }

  @ParameterizedTest
  @MethodSource("corpus")
  void windowsLineEndingsAndAByteOrderMarkReadTheSame(String name) {
    String text = HloCorpus.text(name);
    HloModule unix = new HloParser().parse(text, name);
    HloModule windows = new HloParser().parse("\uFEFF" + text.replace("\n", "\r\n"), name);
    assertThat(windows.computations()).isEqualTo(unix.computations());
  }

  @Test
  void boundedDynamicDimensionsReadAsTheirBoundAndPrintAsWritten() {
    String text = "HloModule m\nENTRY %e (p: f32[<=16,8]) -> f32[<=16,8] {\n"
        + "  ROOT %p = f32[<=16,8]{1,0} parameter(0)\n}\n";
    HloModule m = new HloParser().parse(text, "m.hlo");
    assertThat(m.entry().root().shape()).isEqualTo(TensorShape.of(DType.F32, 16, 8));
    assertThat(new HloPrinter().print(m)).contains("%p = f32[<=16,8]{1,0} parameter(0)");
  }
}
