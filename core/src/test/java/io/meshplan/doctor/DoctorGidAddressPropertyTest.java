package io.meshplan.doctor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.List;
import java.util.Locale;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;

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

  @Property
  void classifiesRandomGids(@ForAll @Size(16) byte[] bytes, @ForAll boolean upper) {
    assertThat(GidAddressKind.of(format(bytes, upper))).isEqualTo(expected(bytes));
  }

  @Property
  void everyIpv4MappedAddressIsIpv4Mapped(@ForAll byte a, @ForAll byte b, @ForAll byte c,
      @ForAll byte d) {
    byte[] bytes = new byte[16];
    bytes[10] = (byte) 0xff;
    bytes[11] = (byte) 0xff;
    bytes[12] = a;
    bytes[13] = b;
    bytes[14] = c;
    bytes[15] = d;
    String gid = format(bytes, false);

    assertThat(GidAddressKind.of(gid)).isEqualTo(GidAddressKind.IPV4_MAPPED);
    // The seed's grep pattern matches exactly these.
    assertThat(gid).contains("0000:0000:0000:0000:0000:ffff");
  }

  @Property
  void linkLocalPrefixIsLinkLocal(@ForAll @Size(16) byte[] bytes) {
    bytes[0] = (byte) 0xfe;
    bytes[1] = (byte) (0x80 | (bytes[1] & 0x3f));

    assertThat(GidAddressKind.of(format(bytes, false))).isEqualTo(GidAddressKind.IPV6_LINK_LOCAL);
  }

  @Property
  void surroundingWhitespaceIsIgnored(@ForAll @Size(16) byte[] bytes) {
    assertThat(GidAddressKind.of(" " + format(bytes, false) + "\n")).isEqualTo(expected(bytes));
  }

  @Property
  void malformedTextIsRejected(@ForAll("malformed") String text) {
    assertThatIllegalArgumentException().isThrownBy(() -> GidAddressKind.of(text))
        .withMessageContaining("not a GID");
  }

  @Provide
  Arbitrary<String> malformed() {
    Arbitrary<String> dropped = Arbitraries.bytes().array(byte[].class).ofSize(16)
        .map(b -> format(b, false))
        .flatMap(s -> Arbitraries.integers().between(0, s.length() - 1)
            .map(i -> s.substring(0, i) + s.substring(i + 1)));
    Arbitrary<String> badDigit = Arbitraries.bytes().array(byte[].class).ofSize(16)
        .map(b -> format(b, false))
        .flatMap(s -> Arbitraries.integers().between(0, s.length() - 1)
            .filter(i -> s.charAt(i) != ':')
            .map(i -> s.substring(0, i) + 'g' + s.substring(i + 1)));
    return Arbitraries.oneOf(
        List.of(dropped, badDigit, Arbitraries.of("", "::ffff:10.0.0.50", "fe80::1")));
  }

  @Example
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
