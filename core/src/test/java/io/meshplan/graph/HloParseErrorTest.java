package io.meshplan.graph;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HloParseErrorTest {
  private static final String HEAD = "HloModule m\n\nENTRY %main (p: f32[2]) -> f32[2] {\n";

  private static void fails(String text, String message) {
    assertThatThrownBy(() -> new HloParser().parse(text, "t.hlo"))
        .isExactlyInstanceOf(InputException.class)
        .hasMessage(message);
  }

  @Test
  void emptyText() {
    fails("", "t.hlo:1:1: expected 'HloModule' at the start of an HLO module but found end of file");
  }

  @Test
  void notHlo() {
    fails("# a README\nhello", "t.hlo:1:1: expected 'HloModule' at the start of an HLO module but"
        + " found '#'");
    fails("{\"nodes\": []}", "t.hlo:1:1: expected 'HloModule' at the start of an HLO module but"
        + " found '{'");
    fails("  \n  module m", "t.hlo:2:3: expected 'HloModule' at the start of an HLO module but"
        + " found 'module'");
  }

  @Test
  void headerWithoutComputations() {
    fails("HloModule m, is_scheduled=true\n", "t.hlo:2:1: expected a computation but found end of"
        + " file");
  }

  @Test
  void truncatedInsideAComputation() {
    fails(HEAD + "  %p = f32[2]{0} parameter(0)\n",
        "t.hlo:5:1: expected an instruction or '}' but found end of file");
  }

  @Test
  void truncatedInsideAnInstruction() {
    fails(HEAD + "  ROOT %p = f32[2]{0} param", "t.hlo:4:28: expected '(' after the opcode but"
        + " found end of file");
    fails(HEAD + "  ROOT %n = f32[2]{0} negate(%p", "t.hlo:4:32: expected ')' but found end of file");
    fails(HEAD + "  ROOT %p = f32[2]{0} parameter(0), metadata={op_name=\"x",
        "t.hlo:4:57: expected '\"' to close the string but found end of file");
    fails(HEAD + "  ROOT %p = f32[2]{0} parameter(0), sharding={devices=[2]0,1",
        "t.hlo:4:61: expected '}' but found end of file");
  }

  @Test
  void truncatedCorpusFileNamesTheFile(@TempDir Path dir) throws Exception {
    String text = HloCorpus.text("mlp_train_step.hlo");
    int cut = text.indexOf("%dot.13");
    Path file = dir.resolve("cut.hlo");
    Files.writeString(file, text.substring(0, cut), StandardCharsets.UTF_8);
    assertThatThrownBy(() -> new HloParser().parse(file))
        .isExactlyInstanceOf(InputException.class)
        .hasMessage(file + ":28:3: expected an instruction or '}' but found end of file");
  }

  @Test
  void missingFile(@TempDir Path dir) {
    Path file = dir.resolve("nope.hlo");
    assertThatThrownBy(() -> new HloParser().parse(file))
        .isExactlyInstanceOf(InputException.class)
        .hasMessageStartingWith(file + ": no such file");
  }

  @Test
  void unknownShapeSyntax() {
    fails(HEAD + "  ROOT %p = f32<2> parameter(0)\n",
        "t.hlo:4:16: expected '[' after the element type but found '<'");
    fails(HEAD + "  ROOT %p = f32[2;3] parameter(0)\n",
        "t.hlo:4:18: expected ',' or ']' in the dimension list but found ';'");
    fails(HEAD + "  ROOT %p = [2] parameter(0)\n",
        "t.hlo:4:13: expected a shape such as f32[8,16]{1,0} or (f32[], s32[]) but found '['");
    fails(HEAD + "  ROOT %p = f32[?] parameter(0)\n",
        "t.hlo:4:17: expected a dimension size but found '?'");
    fails(HEAD + "  ROOT %p = f32[99999999999] parameter(0)\n",
        "t.hlo:4:17: expected a dimension size below 2^31 but found '99999999999'");
  }

  @Test
  void unknownDtype() {
    fails(HEAD + "  ROOT %p = f33[2]{0} parameter(0)\n",
        "t.hlo:4:13: expected an element type (pred, s8, s16, s32, s64, u8, u16, u32, u64, f16, "
            + "bf16, f32, f64, f8e4m3fn, f8e5m2 or token) but found 'f33'");
    fails("HloModule m\nENTRY %e (p: c64[2]) -> f32[] {\n  ROOT %c = f32[] constant(0)\n}\n",
        "t.hlo:2:14: expected an element type (pred, s8, s16, s32, s64, u8, u16, u32, u64, f16, "
            + "bf16, f32, f64, f8e4m3fn, f8e5m2 or token) but found 'c64'");
  }

  @Test
  void undefinedOperandAndDuplicateNames() {
    fails(HEAD + "  %p = f32[2] parameter(0)\n  ROOT %n = f32[2] negate(%q)\n}\n",
        "t.hlo:5:27: expected the name of an instruction in computation 'main' but found '%q'");
    fails(HEAD + "  %p = f32[2] parameter(0)\n  ROOT %p = f32[2] negate(%p)\n}\n",
        "t.hlo:5:8: expected a name not used before in computation 'main' (line 4) but found"
            + " 'p'");
  }

  @Test
  void cyclesAndUsesOfTheRoot() {
    fails(HEAD + "  %a = f32[2] negate(%b)\n  %b = f32[2] negate(%a)\n  ROOT %c = f32[2] negate(%b)"
        + "\n}\n", "t.hlo:4:3: expected operands without a cycle but found 'a' depending on"
        + " itself");
    fails(HEAD + "  ROOT %a = f32[2] parameter(0)\n  %b = f32[2] negate(%a)\n}\n",
        "t.hlo:5:22: expected no use of the ROOT instruction 'a' (the root must come last) but"
            + " found '%a'");
  }

  /**
   * Computations that call one another in a cycle are refused where the cycle closes: HLO has no
   * recursion, and inlining one would expand it to its depth limit and cut it there.
   */
  @Test
  void computationsThatCallThemselves() {
    String c1 = "%c1 (x: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n"
        + "  ROOT %r = f32[] call(f32[] %x), to_apply=%c2\n}\n\n";
    String c2 = "%c2 (y: f32[]) -> f32[] {\n  %y = f32[] parameter(0)\n"
        + "  ROOT %s = f32[] call(f32[] %y), to_apply=%c1\n}\n\n";
    String entry = "ENTRY %main (p: f32[]) -> f32[] {\n  %p = f32[] parameter(0)\n"
        + "  ROOT %q = f32[] call(f32[] %p), to_apply=%c1\n}\n";
    fails("HloModule m\n\n" + c1 + c2 + entry, "t.hlo:3:1: expected computations that do not "
        + "call themselves but found %c1 called back by %c2 (HLO computations do not recurse)");
    String self = "%c3 (z: f32[]) -> f32[] {\n  %z = f32[] parameter(0)\n"
        + "  ROOT %t = f32[] call(f32[] %z), to_apply=%c3\n}\n\n";
    fails("HloModule m\n\n" + self + entry.replace("%c1", "%c3"), "t.hlo:3:1: expected "
        + "computations that do not call themselves but found %c3 called back by %c3 (HLO "
        + "computations do not recurse)");
  }

  @Test
  void badAttributes() {
    fails(HEAD + "  %p = f32[2] parameter(0)\n  ROOT %c = pred[2] compare(%p, %p), direction=LESS\n}",
        "t.hlo:5:48: expected a comparison direction (EQ, NE, LT, LE, GT or GE) but found 'LESS'");
    fails(HEAD + "  %p = f32[2] parameter(0)\n  ROOT %s = f32[1] slice(%p), slice={[0:1}\n}",
        "t.hlo:5:42: expected ']' but found '}'");
    fails(HEAD + "  %p = f32[2] parameter(0)\n  ROOT %t = f32[2] transpose(%p), dimensions={0},"
            + " dimensions={0}\n}",
        "t.hlo:5:51: expected each attribute once but found 'dimensions' a second time");
    fails(HEAD + "  %p = (f32[2]) parameter(0)\n  ROOT %g = f32[2] get-tuple-element(%p)\n}",
        "t.hlo:5:41: expected ', index=N' on get-tuple-element but found end of line");
    fails(HEAD + "  %p = f32[2] parameter(0)\n  ROOT %d = f32[] dot(%p, %p), lhs_contracting_dims="
            + "{0}\n}",
        "t.hlo:5:19: expected as many rhs as lhs batch and contracting dimensions but found lhs"
            + " []/[0] and rhs []/[]");
  }

  @Test
  void badAliases() {
    String body = "ENTRY %e (p: f32[2]) -> (f32[2]) {\n  %p = f32[2] parameter(0)\n"
        + "  ROOT %t = (f32[2]) tuple(%p)\n}\n";
    fails("HloModule m, input_output_alias={ {0}: (3, {}, may-alias) }\n" + body,
        "t.hlo:1:41: expected the number of a parameter of the entry computation but found '3'");
    fails("HloModule m, input_output_alias={ {0}: (0, {}, maybe) }\n" + body,
        "t.hlo:1:48: expected an alias kind (may-alias or must-alias) but found 'maybe'");
    fails("HloModule m, input_output_alias={ {0}: (0, {}, may-alias) }\n"
            + body.replace("ROOT %t = (f32[2]) tuple(%p)",
                "%n = f32[3] parameter(1)\n  ROOT %t = (f32[3]) tuple(%n)"),
        "t.hlo:1:35: expected output [0] to have the shape of parameter 0, f32[2] but found"
            + " f32[3]");
  }

  @Test
  void unterminatedComment() {
    fails("HloModule m /* note", "t.hlo:1:20: expected '*/' to close the comment but found end of"
        + " file");
  }

  @Test
  void twoEntries() {
    String c = "ENTRY %a () -> f32[] {\n  ROOT %c = f32[] constant(0)\n}\n";
    fails("HloModule m\n" + c + c.replace("%a", "%b"),
        "t.hlo:5:1: expected one ENTRY computation per module but found 'ENTRY'");
  }
}
