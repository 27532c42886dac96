package io.meshplan.graph;

import io.meshplan.util.Require;
import java.util.List;

/** The typed attributes of an instruction; which variant an opcode carries is fixed per opcode. */
public sealed interface OpAttrs {
  /** No attributes. */
  record None() implements OpAttrs {}

  /** The shared instance of {@link None}. */
  None NONE = new None();

  /**
   * Dimension numbers of a general dot. Output dimensions are batch, then lhs free, then rhs free.
   *
   * @param lhsBatch lhs batch dimensions
   * @param lhsContracting lhs contracting dimensions
   * @param rhsBatch rhs batch dimensions, paired with lhsBatch
   * @param rhsContracting rhs contracting dimensions, paired with lhsContracting
   */
  record Dot(
      List<Integer> lhsBatch,
      List<Integer> lhsContracting,
      List<Integer> rhsBatch,
      List<Integer> rhsContracting)
      implements OpAttrs {
    /** Validates that the pairs line up. */
    public Dot {
      lhsBatch = List.copyOf(lhsBatch);
      lhsContracting = List.copyOf(lhsContracting);
      rhsBatch = List.copyOf(rhsBatch);
      rhsContracting = List.copyOf(rhsContracting);
      Require.that(lhsBatch.size() == rhsBatch.size(), "dot batch dimensions must pair up");
      Require.that(
          lhsContracting.size() == rhsContracting.size(), "dot contracting dimensions must pair up");
    }
  }

  /**
   * A list of dimensions: broadcast (output dimension of each operand dimension), transpose
   * (operand dimension of each output dimension), reduce (reduced operand dimensions), concatenate
   * (one dimension), reverse.
   *
   * @param dims the dimensions
   */
  record Dims(List<Integer> dims) implements OpAttrs {
    /** Copies the list. */
    public Dims {
      dims = List.copyOf(dims);
    }
  }

  /**
   * A static slice {@code [start:limit:stride]} per dimension.
   *
   * @param starts first index per dimension
   * @param limits one past the last index per dimension
   * @param strides step per dimension
   */
  record Slice(List<Integer> starts, List<Integer> limits, List<Integer> strides)
      implements OpAttrs {
    /** Validates the lengths. */
    public Slice {
      starts = List.copyOf(starts);
      limits = List.copyOf(limits);
      strides = List.copyOf(strides);
      Require.that(
          starts.size() == limits.size() && limits.size() == strides.size(),
          "slice starts, limits and strides must have one entry per dimension");
    }
  }

  /**
   * A comparison direction.
   *
   * @param direction {@code EQ}, {@code NE}, {@code LT}, {@code LE}, {@code GT} or {@code GE}
   */
  record Compare(String direction) implements OpAttrs {}

  /**
   * A constant's literal text as written in HLO (may be abbreviated as {@code {...}}).
   *
   * @param literal the literal
   */
  record Literal(String literal) implements OpAttrs {}

  /**
   * An index: the parameter number of a parameter, or the tuple index of a get-tuple-element.
   *
   * @param index the index
   */
  record Index(int index) implements OpAttrs {}

  /**
   * A fused SSD scan ({@link Opcode#SSD_SCAN} and {@link Opcode#SSD_SCAN_GRAD}).
   *
   * @param output which operand's gradient a backward kernel yields (0 X, 1 dt, 2 A dt, 3 B, 4
   *     C), -1 for the forward
   * @param chunk the chunk length Q, tokens, dividing the sequence
   */
  record Scan(int output, int chunk) implements OpAttrs {
    /** Validates the fields. */
    public Scan {
      io.meshplan.util.Require.that(output >= -1 && output <= 4, () -> "an SSD scan has 5 "
          + "gradients, not " + output);
      io.meshplan.util.Require.positive(chunk, "chunk");
    }
  }

  /**
   * A fused attention kernel ({@link Opcode#FUSED_ATTENTION} and {@link
   * Opcode#FUSED_ATTENTION_GRAD}).
   *
   * @param output which gradient a backward kernel yields (0 dQ, 1 dK, 2 dV), -1 for the forward
   * @param work the causal query-key pairs computed, as a fraction of the causal pairs of the
   *     whole sequence: 1 without a sliding window, less with one ({@link
   *     io.meshplan.model.AttentionShape#causalPairs})
   * @param span the tokens of the sequences the kernel attends within, for its speed ({@link
   *     OpCost#attentionSpan}): packed documents' length where documents are packed, 0 for the
   *     queries' whole length
   */
  record Attention(int output, double work, int span) implements OpAttrs {
    /** Validates the fields. */
    public Attention {
      io.meshplan.util.Require.that(output >= -1 && output <= 2, () -> "attention output -1 to 2, "
          + "got " + output);
      io.meshplan.util.Require.that(work > 0 && work <= 1, () -> "attention work in (0, 1], got "
          + work);
      io.meshplan.util.Require.that(span >= 0, () -> "attention span must be >= 0, got " + span);
    }

    /**
     * A kernel over the queries' whole length.
     *
     * @param output which gradient, -1 for the forward
     * @param work the fraction of the causal pairs computed
     */
    public Attention(int output, double work) {
      this(output, work, 0);
    }
  }
}
