package io.meshplan.graph;

/** The shape of a value: a dense tensor or a tuple of shapes. */
public sealed interface Shape permits TensorShape, TupleShape {
  /**
   * The total size of the value.
   *
   * @return bytes
   */
  long byteSize();

  /**
   * The HLO text form, e.g. {@code f32[64,128]} or {@code (f32[2], s32[])}.
   *
   * @return the text without layout
   */
  String toHlo();
}
