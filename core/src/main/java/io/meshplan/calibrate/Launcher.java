package io.meshplan.calibrate;

/** How benchmark processes are started on the cluster. */
public enum Launcher {
  /** Open MPI {@code mpirun}; nccl-tests built with {@code MPI=1}. */
  MPIRUN,
  /** Slurm {@code srun} with PMIx; nccl-tests built with {@code MPI=1}. */
  SRUN,
  /**
   * PyTorch {@code torchrun}: nccl-tests cannot be started this way, so the plan runs Stas Bekman's
   * {@code all_reduce_bench.py} (all-reduce only), once per node.
   */
  TORCHRUN
}
