package io.meshplan.graph;

import java.util.Locale;

/** Element types, named as in XLA HLO text. */
public enum DType {
  /** Boolean. */
  PRED(1),
  /** Signed 8-bit integer. */
  S8(1),
  /** Signed 16-bit integer. */
  S16(2),
  /** Signed 32-bit integer. */
  S32(4),
  /** Signed 64-bit integer. */
  S64(8),
  /** Unsigned 8-bit integer. */
  U8(1),
  /** Unsigned 16-bit integer. */
  U16(2),
  /** Unsigned 32-bit integer. */
  U32(4),
  /** Unsigned 64-bit integer. */
  U64(8),
  /** IEEE half precision. */
  F16(2),
  /** bfloat16. */
  BF16(2),
  /** IEEE single precision. */
  F32(4),
  /** IEEE double precision. */
  F64(8),
  /** 8-bit float, e4m3. */
  F8E4M3FN(1),
  /** 8-bit float, e5m2. */
  F8E5M2(1),
  /** Opaque token (side-effect ordering); zero bytes. */
  TOKEN(0);

  private final int bytes;

  DType(int bytes) {
    this.bytes = bytes;
  }

  /**
   * The size of one element.
   *
   * @return bytes per element
   */
  public int bytes() {
    return bytes;
  }

  /**
   * Whether this is one of the 8-bit floats FP8 GEMMs read ({@link #F8E4M3FN}, {@link #F8E5M2}).
   *
   * @return true for the two
   */
  public boolean eightBitFloat() {
    return this == F8E4M3FN || this == F8E5M2;
  }

  /**
   * The HLO text name, e.g. {@code f32}.
   *
   * @return the lower-case name
   */
  public String hloName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Looks up an HLO type name.
   *
   * @param name e.g. {@code bf16}
   * @return the type, or {@code null} when unknown
   */
  public static DType fromHlo(String name) {
    for (DType t : values()) {
      if (t.hloName().equals(name)) {
        return t;
      }
    }
    return null;
  }
}
