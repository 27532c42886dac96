package io.meshplan.deploy;

import io.meshplan.util.ShellQuote;
import java.util.TreeMap;

/**
 * Dask over UCX on the IPoIB interface (as in {@code seeds/003}): one script with three roles.
 * {@code scheduler} starts {@code dask-scheduler --protocol ucx --interface IFACE}; {@code worker
 * ADDRESS} starts {@code dask-cuda-worker ucx://ADDRESS:8786} (one worker process per GPU) on each
 * node; {@code client ADDRESS} runs the training command with {@code DASK_SCHEDULER_ADDRESS} set.
 * Every role exports {@code UCX_TLS} and {@code UCX_NET_DEVICES} (the RDMA ports; from the doctor),
 * and the rest of the fabric's environment.
 */
public final class DaskLaunch {
  /** The scheduler's port. */
  static final int SCHEDULER_PORT = 8786;

  private DaskLaunch() {}

  /**
   * Writes the script.
   *
   * @param spec the launch
   * @param fabric the environment
   * @return the script
   */
  public static Artifact write(LaunchSpec spec, FabricEnv fabric) {
    TreeMap<String, String> env = new TreeMap<>(fabric.env());
    env.putIfAbsent("UCX_TLS", "rc,cuda_copy,cuda_ipc");
    if (!fabric.ports().isEmpty()) {
      env.putIfAbsent("UCX_NET_DEVICES", String.join(",", fabric.ports()));
    }
    String iface = ShellQuote.quote(spec.ipoibInterface());
    ScriptText s = ScriptText.bash()
        .comment("Dask over UCX on " + spec.ipoibInterface() + ", written by meshplan deploy: "
            + spec.nodes() + " nodes x " + spec.gpusPerNode() + " GPUs.")
        .comment("Usage: " + spec.name() + "-dask.sh scheduler          (on the scheduler node)")
        .comment("       " + spec.name() + "-dask.sh worker ADDRESS     (on each of the "
            + spec.nodes() + " nodes; ADDRESS is the scheduler's " + spec.ipoibInterface()
            + " address)")
        .comment("       " + spec.name() + "-dask.sh client ADDRESS     (runs the training"
            + " command)")
        .line("set -euo pipefail")
        .line("")
        .exports(env)
        .line("")
        .line("IFACE=" + iface)
        .line("PORT=" + SCHEDULER_PORT)
        .line("usage() {")
        .line("  echo \"usage: $0 scheduler | worker ADDRESS | client ADDRESS\" >&2")
        .line("  exit 2")
        .line("}")
        .line("case \"${1:-}\" in")
        .line("  scheduler)")
        .line("    exec dask-scheduler --protocol ucx --interface \"$IFACE\" --port \"$PORT\"")
        .line("    ;;")
        .line("  worker)")
        .line("    [[ $# -eq 2 ]] || usage")
        .line("    exec dask-cuda-worker \"ucx://$2:$PORT\" --interface \"$IFACE\" --nthreads 1")
        .line("    ;;")
        .line("  client)")
        .line("    [[ $# -eq 2 ]] || usage")
        .line("    export DASK_SCHEDULER_ADDRESS=\"ucx://$2:$PORT\"")
        .line("    exec " + ShellQuote.join(spec.command()))
        .line("    ;;")
        .line("  *)")
        .line("    usage")
        .line("    ;;")
        .line("esac");
    return new Artifact(spec.name() + "-dask.sh", s.text(), true);
  }
}
