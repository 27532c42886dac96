package io.meshplan.calibrate;

import io.meshplan.cluster.Collective;
import io.meshplan.cluster.LinkLevel;
import io.meshplan.util.Require;
import java.util.Comparator;
import java.util.List;

/**
 * A calibration profile: what {@code meshplan calibrate} writes and {@code --profile} reads.
 *
 * @param version the file format version, {@link #VERSION}
 * @param cluster the cluster string the profile was measured on
 * @param entries one per (collective, level, group size), sorted by collective, level, gpus
 */
public record Profile(int version, String cluster, List<ProfileEntry> entries) {
  /** The format version this code writes and reads. */
  public static final int VERSION = 1;

  /** Validates and sorts. */
  public Profile {
    Require.that(version == VERSION, "profile version must be " + VERSION + ", got " + version);
    Require.nonNull(cluster, "cluster");
    entries = entries.stream()
        .sorted(Comparator.comparing(ProfileEntry::collective)
            .thenComparing(ProfileEntry::level).thenComparingInt(ProfileEntry::gpus))
        .toList();
    for (int i = 1; i < entries.size(); i++) {
      ProfileEntry a = entries.get(i - 1);
      ProfileEntry b = entries.get(i);
      Require.that(a.collective() != b.collective() || a.level() != b.level()
          || a.gpus() != b.gpus(), "duplicate profile entry " + b.collective() + " "
          + b.level().label() + " gpus=" + b.gpus());
    }
  }

  /**
   * The entries for one collective at one level.
   *
   * @param collective the collective
   * @param level the level
   * @return the entries, by increasing group size
   */
  public List<ProfileEntry> find(Collective collective, LinkLevel level) {
    return entries.stream().filter(e -> e.collective() == collective && e.level() == level).toList();
  }
}
