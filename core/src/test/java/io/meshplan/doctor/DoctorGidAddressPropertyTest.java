package io.meshplan.doctor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import io.meshplan.testing.Cases;
import io.meshplan.testing.Cases.Gen;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/** Properties of {@link GidAddressKind#of}: classification by the 16 bytes a GID stands for. */
class DoctorGidAddressPropertyTest {

  static String format(byte[] bytes, boolean upper) {
    StringBuilder sb = new StringBuilder();
    for (int g = 0; g < 8; g++) {
      if (g > 0) {
        sb.append(':');
      }
      sb.append(String.format("%02x%02x", bytes[2 * g] & 0xff, bytes[2 * g + 1] & 0xff));
    }
    return upper ? sb.toString().toUpperCase(Locale.ROOT) : sb.toString();
  }

  /** The expected kind from the bytes, written independently of the string-based code. */
  static GidAddressKind expected(byte[] b) {
    boolean allZero = true;
    for (byte x : b) {
      allZero &= x == 0;
    }
    if (allZero) {
      return GidAddressKind.ZERO;
    }
    boolean firstTenZero = true;
    for (int i = 0; i < 10; i++) {
      firstTenZero &= b[i] == 0;
    }
    if (firstTenZero && (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff) {
      return GidAddressKind.IPV4_MAPPED;
    }
    if ((b[0] & 0xff) == 0xfe && (b[1] & 0xc0) == 0x80) {
      return GidAddressKind.IPV6_LINK_LOCAL;
    }
    return GidAddressKind.IPV6;
  }

  /** 16 bytes, and whether their hex digits are written in upper case. */
  private record Gid(byte[] bytes, boolean upper) {
    @Override
    public String toString() {
      return format(bytes, upper);
    }
  }

  /**
   * 16-byte edge cases: every byte 0, 1, -1, the least or the greatest byte, and the ends of the
   * prefixes: ::ffff:0:0, ::ffff:255.255.255.255, fe80::, febf:ffff:..., fec0:: and fe7f:ffff:....
   * New arrays each call, as some properties overwrite them.
   */
  static List<byte[]> edgeGids() {
    List<byte[]> out = new ArrayList<>();
    for (byte b : new byte[] {0, 1, -1, Byte.MIN_VALUE, Byte.MAX_VALUE}) {
      byte[] bytes = new byte[16];
      Arrays.fill(bytes, b);
      out.add(bytes);
    }
    byte[] mapped = new byte[16];
    mapped[10] = (byte) 0xff;
    mapped[11] = (byte) 0xff;
    out.add(mapped);
    byte[] mappedMax = mapped.clone();
    Arrays.fill(mappedMax, 12, 16, (byte) 0xff);
    out.add(mappedMax);
    out.add(prefixed(0xfe, 0x80, 0));
    out.add(prefixed(0xfe, 0xbf, 0xff));
    out.add(prefixed(0xfe, 0xc0, 0));
    out.add(prefixed(0xfe, 0x7f, 0xff));
    return out;
  }

  private static byte[] prefixed(int first, int second, int rest) {
    byte[] bytes = new byte[16];
    Arrays.fill(bytes, (byte) rest);
    bytes[0] = (byte) first;
    bytes[1] = (byte) second;
    return bytes;
  }

  @Test
  void classifiesRandomGids() {
    List<Gid> edges = new ArrayList<>();
    for (boolean upper : new boolean[] {false, true}) {
      for (byte[] bytes : edgeGids()) {
        edges.add(new Gid(bytes, upper));
      }
    }
    Cases.check(11, 1000, edges, gen -> new Gid(gen.bytes(16), gen.bool()), gid ->
        assertThat(GidAddressKind.of(format(gid.bytes(), gid.upper())))
            .isEqualTo(expected(gid.bytes())));
  }

  @Test
  void everyIpv4MappedAddressIsIpv4Mapped() {
    List<byte[]> edges = new ArrayList<>();
    for (byte b : new byte[] {0, 1, -1, Byte.MIN_VALUE, Byte.MAX_VALUE}) {
      edges.add(new byte[] {b, b, b, b});
    }
    edges.add(new byte[] {10, 0, 0, 50});
    Cases.check(12, 1000, edges, gen -> gen.bytes(4), abcd -> {
      byte[] bytes = new byte[16];
      bytes[10] = (byte) 0xff;
      bytes[11] = (byte) 0xff;
      bytes[12] = abcd[0];
      bytes[13] = abcd[1];
      bytes[14] = abcd[2];
      bytes[15] = abcd[3];
      String gid = format(bytes, false);

      assertThat(GidAddressKind.of(gid)).isEqualTo(GidAddressKind.IPV4_MAPPED);
      // The seed's grep pattern matches exactly these.
      assertThat(gid).contains("0000:0000:0000:0000:0000:ffff");
    });
  }

  @Test
  void linkLocalPrefixIsLinkLocal() {
    Cases.check(13, 1000, edgeGids(), gen -> gen.bytes(16), bytes -> {
      bytes[0] = (byte) 0xfe;
      bytes[1] = (byte) (0x80 | (bytes[1] & 0x3f));

      assertThat(GidAddressKind.of(format(bytes, false)))
          .isEqualTo(GidAddressKind.IPV6_LINK_LOCAL);
    });
  }

  @Test
  void surroundingWhitespaceIsIgnored() {
    Cases.check(14, 1000, edgeGids(), gen -> gen.bytes(16), bytes ->
        assertThat(GidAddressKind.of(" " + format(bytes, false) + "\n"))
            .isEqualTo(expected(bytes)));
  }

  @Test
  void malformedTextIsRejected() {
    List<String> edges = new ArrayList<>(List.of("", "::ffff:10.0.0.50", "fe80::1"));
    for (byte[] bytes : List.of(new byte[16], prefixed(0xff, 0xff, 0xff))) {
      String s = format(bytes, false);
      int last = s.length() - 1;
      edges.addAll(List.of(s.substring(1), s.substring(0, last), s.substring(0, 4) + s.substring(5),
          'g' + s.substring(1), s.substring(0, last) + 'g'));
    }
    Cases.check(15, 1000, edges, DoctorGidAddressPropertyTest::malformed, text ->
        assertThatIllegalArgumentException().isThrownBy(() -> GidAddressKind.of(text))
            .withMessageContaining("not a GID"));
  }

  /**
   * A GID with one character dropped, a GID with one hex digit turned into {@code g}, or one of
   * three texts that are not GIDs, each alternative as likely.
   */
  static String malformed(Gen gen) {
    return switch (gen.random().nextInt(3)) {
      case 0 -> {
        String s = format(gen.bytes(16), false);
        int i = gen.between(0, s.length() - 1);
        yield s.substring(0, i) + s.substring(i + 1);
      }
      case 1 -> {
        String s = format(gen.bytes(16), false);
        int i;
        do {
          i = gen.between(0, s.length() - 1);
        } while (s.charAt(i) == ':');
        yield s.substring(0, i) + 'g' + s.substring(i + 1);
      }
      default -> gen.oneOf("", "::ffff:10.0.0.50", "fe80::1");
    };
  }

  @Test
  void seedExamples() {
    assertThat(GidAddressKind.of("fe80:0000:0000:0000:0a1b:2cff:fe3d:4e5f"))
        .isEqualTo(GidAddressKind.IPV6_LINK_LOCAL);
    assertThat(GidAddressKind.of("0000:0000:0000:0000:0000:ffff:0a00:0032"))
        .isEqualTo(GidAddressKind.IPV4_MAPPED);
    assertThat(GidAddressKind.of("0000:0000:0000:0000:0000:0000:0000:0000"))
        .isEqualTo(GidAddressKind.ZERO);
    // ::ffff:0:0/96 needs the five leading groups to be zero; this one is a plain IPv6 address.
    assertThat(GidAddressKind.of("0000:0000:0000:0000:0001:ffff:0a00:0032"))
        .isEqualTo(GidAddressKind.IPV6);
  }
}
