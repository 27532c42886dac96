package io.meshplan.doctor;

import io.meshplan.util.AsciiDigits;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * What kind of address a 128-bit GID holds, as read from {@code ports/<p>/gids/<i>} in sysfs. The
 * text form is eight colon-separated groups of four hex digits, for example {@code
 * 0000:0000:0000:0000:0000:ffff:0a00:0032}.
 */
public enum GidAddressKind {
  /** All zeros: an unused GID table entry. */
  ZERO,
  /** An IPv4-mapped IPv6 address ({@code ::ffff:a.b.c.d}): the GID of an IPv4 address on RoCE. */
  IPV4_MAPPED,
  /** An IPv6 link-local address ({@code fe80::/10}). */
  IPV6_LINK_LOCAL,
  /** Any other IPv6 address (global, unique-local, ...). */
  IPV6;

  private static final Pattern GID = Pattern.compile("[0-9a-fA-F]{4}(:[0-9a-fA-F]{4}){7}");

  /**
   * Classifies a GID string. Matches exactly what {@code grep '0000:0000:0000:0000:0000:ffff'} in
   * the RunAI guide matches for a well-formed GID: the first five groups zero, the sixth {@code
   * ffff}.
   *
   * @param gid the GID text, surrounding whitespace allowed, hex digits in either case
   * @return the kind
   * @throws IllegalArgumentException if the text is not eight groups of four hex digits
   */
  public static GidAddressKind of(String gid) {
    String text = gid == null ? "" : gid.strip().toLowerCase(Locale.ROOT);
    if (!GID.matcher(text).matches()) {
      throw new IllegalArgumentException(
          "not a GID (expected 8 groups of 4 hex digits such as fe80:0000:0000:0000:0a1b:2cff:fe3d:4e5f): '"
              + (gid == null ? "" : gid.strip())
              + "'");
    }
    if (text.equals("0000:0000:0000:0000:0000:0000:0000:0000")) {
      return ZERO;
    }
    if (text.startsWith("0000:0000:0000:0000:0000:ffff:")) {
      return IPV4_MAPPED;
    }
    int firstGroup = AsciiDigits.parseInt(text.substring(0, 4), 16);
    if ((firstGroup & 0xffc0) == 0xfe80) {
      return IPV6_LINK_LOCAL;
    }
    return IPV6;
  }
}
