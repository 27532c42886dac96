package io.meshplan.intraop;

/**
 * The unit of an intra-operator plan's costs.
 */
public enum CostUnit {
  /** Seconds on a real cluster: kernels by roofline, collectives from the catalog or a profile. */
  SECONDS("seconds"),
  /**
   * The abstract units of Alpa's prototype (OSDI'22, section 4.1): collectives cost {@code alpha +
   * beta * factor * bytes} with hand-given alpha and beta per mesh axis, compute is free.
   */
  ALPA_UNITS("alpha-beta units");

  private final String label;

  CostUnit(String label) {
    this.label = label;
  }

  /**
   * The words meshplan prints for the unit.
   *
   * @return e.g. {@code seconds}
   */
  public String label() {
    return label;
  }

  /**
   * The unit of an environment's costs.
   *
   * @param env the mesh environment
   * @return {@link #SECONDS} when compute is priced, else {@link #ALPA_UNITS}
   */
  public static CostUnit of(MeshEnv env) {
    return env.compute().isPresent() ? SECONDS : ALPA_UNITS;
  }
}
