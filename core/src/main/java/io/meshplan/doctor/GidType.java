package io.meshplan.doctor;

import java.util.Optional;

/** The RoCE version of a GID, as read from {@code ports/<p>/gid_attrs/types/<i>}. */
public enum GidType {
  /** {@code IB/RoCE v1}: InfiniBand GIDs and RoCE v1 (layer 2, not routable). */
  ROCE_V1("IB/RoCE v1"),
  /** {@code RoCE v2}: RoCE over UDP/IP, routable; what NCCL should use on RoCE fabrics. */
  ROCE_V2("RoCE v2");

  private final String sysfsText;

  GidType(String sysfsText) {
    this.sysfsText = sysfsText;
  }

  /**
   * The text the kernel writes for this type.
   *
   * @return for example {@code RoCE v2}
   */
  public String sysfsText() {
    return sysfsText;
  }

  /**
   * Parses the content of a {@code gid_attrs/types/<i>} file.
   *
   * @param text the file content; surrounding whitespace is ignored
   * @return the type, or empty when the text is not one the kernel writes
   */
  public static Optional<GidType> parse(String text) {
    String t = text == null ? "" : text.strip();
    for (GidType type : values()) {
      if (type.sysfsText.equals(t)) {
        return Optional.of(type);
      }
    }
    return Optional.empty();
  }
}
