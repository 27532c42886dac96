package io.meshplan.graph;

import io.meshplan.util.Require;
import java.util.List;

/**
 * A tuple of shapes, as produced by {@code tuple}, {@code while} and multi-output fusions.
 *
 * @param elements the element shapes, in order
 */
public record TupleShape(List<Shape> elements) implements Shape {
  /** Validates and copies the elements. */
  public TupleShape {
    elements = List.copyOf(Require.nonNull(elements, "tuple elements"));
  }

  @Override
  public long byteSize() {
    long n = 0;
    for (Shape s : elements) {
      n += s.byteSize();
    }
    return n;
  }

  @Override
  public String toHlo() {
    StringBuilder sb = new StringBuilder("(");
    for (int i = 0; i < elements.size(); i++) {
      if (i > 0) {
        sb.append(", ");
      }
      sb.append(elements.get(i).toHlo());
    }
    return sb.append(')').toString();
  }

  @Override
  public String toString() {
    return toHlo();
  }
}
