package io.meshplan.graph;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import org.junit.jupiter.api.Test;

/** The source-location tables XLA prints with debug information are skipped. */
class HloDebugInfoTest {
  private static final String BODY = """
      ENTRY main {
        x = f32[4] parameter(0), metadata={op_name="x"}
        ROOT y = f32[4] add(x, x), metadata={op_name="jit(f)/add" stack_frame_id=2}
      }
      """;

  @Test
  void tablesBetweenHeaderAndComputationsAreSkipped() {
    String text = """
        HloModule jit_f

        FileNames
        1 "/home/user/f.py"

        FunctionNames
        1 "f"

        FileLocations
        1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=9}

        StackFrames
        1 {file_location_id=1 parent_frame_id=1}
        2 {file_location_id=1 parent_frame_id=1}

        """ + BODY;
    Graph g = new HloParser().parse(text, "f.hlo").entry();
    assertThat(g.size()).isEqualTo(2);
    assertThat(g.root().opName()).isEqualTo("jit(f)/add");
  }

  @Test
  void aTableWordThatStartsAComputationIsAComputation() {
    // "FileNames" followed by more text on its line is not a table; read as a computation, it
    // is not valid HLO and says where.
    assertThatThrownBy(() -> new HloParser().parse("HloModule m\nFileNames x {\n" + BODY,
        "m.hlo")).isInstanceOf(InputException.class).hasMessageStartingWith("m.hlo:2:");
    // Only tables: no computation.
    assertThatThrownBy(() -> new HloParser().parse("HloModule m\nStackFrames\n1 {a=1}\n",
        "t.hlo")).isInstanceOf(InputException.class)
        .hasMessageContaining("expected a computation");
  }
}
