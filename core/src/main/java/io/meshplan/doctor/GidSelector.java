package io.meshplan.doctor;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Picks the GID index NCCL should use on a RoCE port.
 *
 * <p>The first choice is what the RunAI guide's one-liner computes: an entry whose {@code gids/<i>}
 * is IPv4-mapped ({@code 0000:0000:0000:0000:0000:ffff:...}) and whose {@code gid_attrs/types/<i>}
 * is {@code RoCE v2}. When there is none, the fallbacks follow {@link GidKind} order: RoCE v2 IPv6
 * (non-link-local before {@code fe80}), then RoCE v1 IPv4, then RoCE v1 IPv6. Ties go to the lowest
 * index.
 */
public final class GidSelector {
  private static final Comparator<GidEntry> ORDER =
      Comparator.comparing(GidEntry::kind).thenComparingInt(GidEntry::index);

  private GidSelector() {}

  /**
   * Chooses among a port's usable GID entries.
   *
   * @param gids the entries (zero and untyped ones already left out)
   * @return the choice, or empty when there is no entry
   */
  public static Optional<GidChoice> choose(List<GidEntry> gids) {
    return gids.stream()
        .min(ORDER)
        .map(g -> new GidChoice(g.index(), g.kind(), g.address(), g.netdev()));
  }
}
