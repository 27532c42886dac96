package io.meshplan.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Each test removes the winner of the previous step to walk down the fallback order. */
class GidSelectorTest {
  private static final String V4 = "0000:0000:0000:0000:0000:ffff:0a00:0032";
  private static final String V6 = "2001:0db8:0000:0000:0000:0000:0000:0001";
  private static final String LL = "fe80:0000:0000:0000:0a1b:2cff:fe3d:4e5f";

  private static GidEntry e(int i, String addr, GidType t) {
    return new GidEntry(i, addr, GidAddressKind.of(addr), t, "bond0");
  }

  /** A table with every kind once, the best ones at the highest indices. */
  private static List<GidEntry> fullTable() {
    return new ArrayList<>(List.of(
        e(0, LL, GidType.ROCE_V1),
        e(1, V6, GidType.ROCE_V1),
        e(2, V4, GidType.ROCE_V1),
        e(3, LL, GidType.ROCE_V2),
        e(4, V6, GidType.ROCE_V2),
        e(5, V4, GidType.ROCE_V2)));
  }

  @Test
  void walksTheFallbackOrder() {
    List<GidEntry> table = fullTable();
    List<Integer> order = new ArrayList<>();
    List<GidKind> kinds = new ArrayList<>();
    while (!table.isEmpty()) {
      GidChoice c = GidSelector.choose(table).orElseThrow();
      order.add(c.index());
      kinds.add(c.kind());
      table.removeIf(g -> g.index() == c.index());
    }
    // v2 IPv4 (5), v2 global IPv6 (4), v2 fe80 (3), v1 IPv4 (2), v1 global IPv6 (1), v1 fe80 (0).
    assertThat(order).containsExactly(5, 4, 3, 2, 1, 0);
    assertThat(kinds).containsExactly(GidKind.values());
  }

  @Test
  void tiesGoToTheLowestIndex() {
    List<GidEntry> table = List.of(e(11, V4, GidType.ROCE_V2), e(10, V4, GidType.ROCE_V2),
        e(1, LL, GidType.ROCE_V2));

    assertThat(GidSelector.choose(table).orElseThrow().index()).isEqualTo(10);
  }

  @Test
  void keepsTheNetdevOfTheChosenEntry() {
    GidChoice c = GidSelector.choose(List.of(
        new GidEntry(3, V4, GidAddressKind.IPV4_MAPPED, GidType.ROCE_V2, "net1"))).orElseThrow();

    assertThat(c.netdev()).isEqualTo("net1");
    assertThat(c.address()).isEqualTo(V4);
    assertThat(c.kind().preferred()).isTrue();
  }

  @Test
  void emptyTableHasNoChoice() {
    assertThat(GidSelector.choose(List.of())).isEmpty();
  }
}
