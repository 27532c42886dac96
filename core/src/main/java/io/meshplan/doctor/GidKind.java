package io.meshplan.doctor;

import java.util.Optional;

/**
 * The kind of a usable RoCE GID, in order of preference for {@code NCCL_IB_GID_INDEX}. The first
 * constant is the answer of the RunAI guide's one-liner; the others are fallbacks, labelled as such.
 */
public enum GidKind {
  /** RoCE v2 with an IPv4-mapped address: the preferred choice. */
  ROCE_V2_IPV4("RoCE v2 IPv4"),
  /** RoCE v2 with a non-link-local IPv6 address. */
  ROCE_V2_IPV6("RoCE v2 IPv6"),
  /** RoCE v2 with a link-local ({@code fe80}) IPv6 address. */
  ROCE_V2_IPV6_LINK_LOCAL("RoCE v2 IPv6 link-local"),
  /** RoCE v1 with an IPv4-mapped address. */
  ROCE_V1_IPV4("RoCE v1 IPv4"),
  /** RoCE v1 with a non-link-local IPv6 address. */
  ROCE_V1_IPV6("RoCE v1 IPv6"),
  /** RoCE v1 with a link-local IPv6 address. */
  ROCE_V1_IPV6_LINK_LOCAL("RoCE v1 IPv6 link-local");

  private final String label;

  GidKind(String label) {
    this.label = label;
  }

  /**
   * A short human label.
   *
   * @return for example {@code RoCE v2 IPv4}
   */
  public String label() {
    return label;
  }

  /**
   * Whether this is the preferred kind rather than a fallback.
   *
   * @return true for {@link #ROCE_V2_IPV4}
   */
  public boolean preferred() {
    return this == ROCE_V2_IPV4;
  }

  /**
   * The kind of a GID with the given type and address.
   *
   * @param type the RoCE version
   * @param address the address kind
   * @return the kind, or empty for an unused (zero) GID
   */
  public static Optional<GidKind> of(GidType type, GidAddressKind address) {
    boolean v2 = type == GidType.ROCE_V2;
    return switch (address) {
      case ZERO -> Optional.empty();
      case IPV4_MAPPED -> Optional.of(v2 ? ROCE_V2_IPV4 : ROCE_V1_IPV4);
      case IPV6 -> Optional.of(v2 ? ROCE_V2_IPV6 : ROCE_V1_IPV6);
      case IPV6_LINK_LOCAL -> Optional.of(v2 ? ROCE_V2_IPV6_LINK_LOCAL : ROCE_V1_IPV6_LINK_LOCAL);
    };
  }
}
