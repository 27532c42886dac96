package io.meshplan.graph;

import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import io.meshplan.util.Require;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads XLA HLO text (as written by {@code HloModule::ToString}, JAX's {@code
 * jax.jit(f).lower(...).compile().as_text()}, {@code XLA_FLAGS=--xla_dump_to} or PyTorch/XLA) into an
 * {@link HloModule}. The entry computation is the {@link Graph} the planner plans.
 *
 * <p>What the reader accepts: the module header with any attributes; {@code ENTRY} and other
 * computations with or without a signature; {@code ROOT}; names with or without {@code %}; shapes
 * with layouts, tuples, scalars and bounded dynamic dimensions ({@code <=8}, read as their bound);
 * operands with or without their shapes; C-style block comments; and any attribute, read
 * generically as balanced text. Operands may come in any order; instructions are renumbered in a
 * stable topological order with the root last. Opcodes it does not know become {@link
 * Opcode#UNKNOWN} with a warning in {@link HloModule#warnings()}.
 *
 * <p>Every problem with the text is an {@link InputException} whose one-line message is {@code
 * FILE:LINE:COLUMN: expected X but found Y}.
 */
public final class HloParser {
  /** The default for {@link #HloParser(int)}: constant literals longer than this are elided. */
  public static final int DEFAULT_LITERAL_LIMIT = 1024;

  private final int literalLimit;

  /** A parser that elides constant literals longer than {@link #DEFAULT_LITERAL_LIMIT}. */
  public HloParser() {
    this(DEFAULT_LITERAL_LIMIT);
  }

  /**
   * A parser with a size limit on kept constant literals. A longer literal is kept as {@code {...}}
   * (how XLA prints elided constants): the planner needs shapes, not weights, and a dump with
   * embedded weights would otherwise be held in memory twice.
   *
   * @param literalLimit the longest literal kept, in characters
   */
  public HloParser(int literalLimit) {
    this.literalLimit = Require.positive(literalLimit, "literalLimit");
  }

  /**
   * Reads an HLO text file.
   *
   * @param file the file
   * @return the module
   * @throws InputException when the file cannot be read or is not valid HLO text
   */
  public HloModule parse(Path file) {
    String text = InputFiles.readString(file, InputFiles.HLO_MAX_BYTES, "HLO text module");
    return parse(text, file.toString());
  }

  /**
   * Reads HLO text.
   *
   * @param text the text
   * @param sourceName the name used in error messages, e.g. the file name
   * @return the module
   * @throws InputException when the text is not valid HLO
   */
  public HloModule parse(String text, String sourceName) {
    Require.nonNull(text, "text");
    Require.nonNull(sourceName, "sourceName");
    HloCursor cursor = new HloCursor(text, sourceName);
    if (text.startsWith("\uFEFF")) {
      cursor.pos = 1;
    }
    return new HloReader(cursor, literalLimit).module();
  }
}
