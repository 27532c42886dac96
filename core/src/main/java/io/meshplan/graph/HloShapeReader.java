package io.meshplan.graph;

import io.meshplan.util.InputException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads HLO shapes: a tensor such as {@code f32[8,16]{1,0}} (bounded dimensions {@code <=8} are
 * read as their bound, the layout is skipped) or a tuple such as {@code (f32[], s32[])}.
 */
final class HloShapeReader {
  private static final int MAX_TUPLE_NESTING = 64;
  /**
   * The highest tensor rank read: 64, NumPy's limit (NPY_MAXDIMS in NumPy 2). The number of
   * layouts of a tensor grows as (rank + 1)^(mesh axes), so a rank of 10^6 would never finish.
   */
  static final int MAX_RANK = 64;

  private final HloCursor c;

  HloShapeReader(HloCursor cursor) {
    this.c = cursor;
  }

  /** Skips space and reads one shape. */
  Shape shape() {
    return shape(0);
  }

  private Shape shape(int depth) {
    c.skipSpace();
    return c.peek() == '(' ? tuple(depth) : tensor();
  }

  private TupleShape tuple(int depth) {
    if (depth >= MAX_TUPLE_NESTING) {
      throw c.error("at most " + MAX_TUPLE_NESTING + " nested tuple shapes");
    }
    c.pos++;
    List<Shape> elements = new ArrayList<>();
    if (!c.accept(')')) {
      do {
        elements.add(shape(depth + 1));
      } while (c.accept(','));
      c.expect(')');
    }
    return new TupleShape(elements);
  }

  private TensorShape tensor() {
    int start = c.pos;
    DType dtype = elementType();
    if (c.peek() != '[') {
      throw c.error("'[' after the element type");
    }
    c.pos++;
    int[] dims = dimensions();
    if (c.peek() == '{') {
      c.skipGroup();
    }
    try {
      return new TensorShape(dtype, dims);
    } catch (InputException e) {
      throw new InputException(c.location(start) + ": " + e.getMessage(), e);
    }
  }

  private DType elementType() {
    int start = c.pos;
    String word = c.word();
    if (word.isEmpty()) {
      throw c.error("a shape such as f32[8,16]{1,0} or (f32[], s32[])");
    }
    DType dtype = DType.fromHlo(word);
    if (dtype == null) {
      throw c.errorAt(start, "an element type (pred, s8, s16, s32, s64, u8, u16, u32, u64, f16, "
          + "bf16, f32, f64, f8e4m3fn, f8e5m2 or token)");
    }
    return dtype;
  }

  /** Reads the dimension sizes after the opening {@code [}, through the closing {@code ]}. */
  private int[] dimensions() {
    int[] dims = new int[4];
    int rank = 0;
    if (c.accept(']')) {
      return new int[0];
    }
    while (true) {
      c.skipSpace();
      if (c.text.startsWith("<=", c.pos)) {
        c.pos += 2;
      }
      if (rank == MAX_RANK) {
        throw c.error("at most " + MAX_RANK + " dimensions in a shape");
      }
      if (rank == dims.length) {
        dims = Arrays.copyOf(dims, rank * 2);
      }
      dims[rank++] = c.integer("a dimension size");
      if (c.accept(']')) {
        return Arrays.copyOf(dims, rank);
      }
      if (!c.accept(',')) {
        throw c.error("',' or ']' in the dimension list");
      }
    }
  }
}
