package io.meshplan.cluster;

/** The transport family of an inter-node fabric. */
public enum FabricKind {
  /** InfiniBand with GPUDirect RDMA. */
  INFINIBAND,
  /** RDMA over Converged Ethernet (v2). */
  ROCE,
  /** Plain TCP sockets over Ethernet (NCCL's socket transport). */
  ETHERNET
}
