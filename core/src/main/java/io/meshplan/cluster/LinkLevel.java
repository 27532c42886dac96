package io.meshplan.cluster;

/** Whether a device group stays inside one node or spans several. */
public enum LinkLevel {
  /** All members on one node: NVLink (and NVSwitch). */
  INTRA_NODE,
  /** Members on two or more nodes: the NICs and the fabric, plus NVLink inside each node. */
  INTER_NODE;

  /**
   * The level of a group spanning a number of nodes.
   *
   * @param nodes nodes the group touches, at least 1
   * @return {@link #INTRA_NODE} for one node, else {@link #INTER_NODE}
   */
  public static LinkLevel ofNodes(int nodes) {
    return nodes <= 1 ? INTRA_NODE : INTER_NODE;
  }

  /**
   * The lower-case name used in profile files and reports.
   *
   * @return {@code intra-node} or {@code inter-node}
   */
  public String label() {
    return this == INTRA_NODE ? "intra-node" : "inter-node";
  }
}
