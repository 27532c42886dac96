package io.meshplan.deploy;

import io.meshplan.util.ShellQuote;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Dask over UCX on the IPoIB interface (as in {@code seeds/003}): one script with three roles.
 * {@code scheduler} starts {@code dask scheduler --protocol ucx --interface IFACE}; {@code worker
 * ADDRESS} starts {@code dask cuda worker ucx://ADDRESS:8786} (one worker process per GPU) on each
 * node; {@code client ADDRESS} runs the training command with {@code DASK_SCHEDULER_ADDRESS} set.
 *
 * <p>The commands are the {@code dask} CLI's subcommands: distributed registers {@code scheduler}
 * under the {@code dask_cli} entry point ({@code pyproject.toml}, dask/distributed 40fcd99a), the
 * {@code dask-scheduler} script being gone; dask-cuda registers {@code cuda} with its {@code
 * worker} command ({@code pyproject.toml} and {@code dask_cuda/cli.py}, rapidsai/dask-cuda
 * 63a1ea97). UCX needs the {@code distributed-ucxx} package ({@code docs/source/install.rst}),
 * which the script names in one line. The UCX settings follow the manual configuration of
 * dask-cuda's guide ({@code docs/source/examples/ucx.rst}, {@code docs/source/ucx.rst}): the
 * scheduler and client get {@code DASK_DISTRIBUTED_UCXX__CREATE_CUDA_CONTEXT=True}, the transport
 * switches as {@code DASK_DISTRIBUTED_UCXX__*} and an RMM pool; the workers the same switches as
 * {@code --enable-*} flags and {@code --rmm-pool-size}; a hand-set {@code UCX_TLS} always holds
 * {@code tcp} ("required for very small transfers").
 *
 * <p>rdmacm, UCX's RDMA connection manager, resolves the peers' IP addresses to RDMA ports, so
 * it needs the interface Dask listens on to be one that RDMA ports sit behind: an IPoIB interface,
 * or the RoCE netdev of the fabric's ports ({@link FabricEnv#rdmacmInterfaces()}). dask-cuda's
 * guide gives {@code --interface ib0} "to ensure RDMACM is used" and says that where RDMACM is not
 * required the interface may be another ({@code docs/source/examples/ucx.rst}); rdmacm "will not
 * work if InfiniBand is disabled" ({@code docs/source/ucx.rst}), and {@code --enable-rdmacm}
 * "requires {@code --enable-infiniband}" ({@code dask_cuda/cli.py}), all at rapidsai/dask-cuda
 * 63a1ea97. So the script enables rdmacm only with UCX's RDMA transport on such an interface, and
 * otherwise disables it, which leaves UCX its TCP connection manager, with a comment saying why.
 */
public final class DaskLaunch {
  /** The scheduler's port. */
  static final int SCHEDULER_PORT = 8786;
  /** The RMM pool per process unless {@code RMM_POOL_SIZE} is set when the script runs. */
  static final String RMM_POOL = "1GB";
  /** The packages every role needs, as the script's requirement line names them. */
  static final String PACKAGES = "dask distributed dask-cuda distributed-ucxx";

  private DaskLaunch() {}

  /**
   * Writes the script.
   *
   * @param spec the launch
   * @param fabric the environment
   * @return the script
   */
  public static Artifact write(LaunchSpec spec, FabricEnv fabric) {
    boolean ib = !fabric.ports().isEmpty() && !fabric.roce();
    boolean rdmaInterface = fabric.rdmacmInterfaces().contains(spec.ipoibInterface());
    TreeMap<String, String> env = environment(fabric, ib, rdmaInterface);
    String iface = ShellQuote.quote(spec.ipoibInterface());
    ScriptText s = ScriptText.bash()
        .comment("Dask over UCX on " + spec.ipoibInterface() + ", written by meshplan deploy: "
            + io.meshplan.util.Words.count(spec.nodes(), "node") + " x " + io.meshplan.util.Words.count(spec.gpusPerNode(), "GPU") + ".")
        .comment("Needs on every node: pip install " + PACKAGES + " (the dask CLI with 'dask"
            + " scheduler' and 'dask cuda worker'; UCX through distributed-ucxx).")
        .comment("Usage: " + spec.name() + "-dask.sh scheduler          (on the scheduler node)")
        .comment("       " + spec.name() + "-dask.sh worker ADDRESS     (on each of the "
            + spec.nodes() + " nodes; ADDRESS is the scheduler's " + spec.ipoibInterface()
            + " address)")
        .comment("       " + spec.name() + "-dask.sh client ADDRESS     (runs the training"
            + " command)");
    if (env.get("DASK_DISTRIBUTED_UCXX__INFINIBAND").equals("True") && !rdmaInterface) {
      s.comment("rdmacm is off: " + spec.ipoibInterface() + " is not an IPoIB interface nor the"
          + " RoCE netdev of the fabric's ports, and rdmacm needs one; UCX connects over TCP.");
    }
    ProcessFabric.nodeNote(fabric).forEach(s::comment);
    s.line("set -euo pipefail")
        .line("")
        .exports(env)
        .line("")
        .line("IFACE=" + iface)
        .line("PORT=" + SCHEDULER_PORT)
        .line("RMM_POOL_SIZE=\"${RMM_POOL_SIZE:-" + RMM_POOL + "}\"")
        .line("export DASK_DISTRIBUTED_UCXX__RMM__POOL_SIZE=\"$RMM_POOL_SIZE\"")
        .line("usage() {")
        .line("  echo \"usage: $0 scheduler | worker ADDRESS | client ADDRESS\" >&2")
        .line("  exit 2")
        .line("}")
        .line("case \"${1:-}\" in")
        .line("  scheduler)")
        .line("    exec dask scheduler --protocol ucx --interface \"$IFACE\" --port \"$PORT\"")
        .line("    ;;")
        .line("  worker)")
        .line("    [[ $# -eq 2 ]] || usage")
        .line("    exec dask cuda worker \"ucx://$2:$PORT\" --interface \"$IFACE\" --nthreads 1"
            + " --rmm-pool-size \"$RMM_POOL_SIZE\" " + String.join(" ", workerFlags(env)))
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

  /**
   * The environment of every role: the fabric's, {@code UCX_TLS} with {@code tcp}, and the
   * dask-cuda switches that the scheduler and the client read from the environment; rdmacm only
   * with RDMA on an interface it can use.
   */
  private static TreeMap<String, String> environment(FabricEnv fabric, boolean ib,
      boolean rdmaInterface) {
    TreeMap<String, String> env = new TreeMap<>(fabric.env());
    Set<String> tls = new LinkedHashSet<>(List.of(env.getOrDefault("UCX_TLS",
        "rc,cuda_copy,cuda_ipc").split(",")));
    tls.add("tcp");
    if (ib) {
      tls.add("rc");
    }
    env.put("UCX_TLS", String.join(",", tls));
    if (!fabric.ports().isEmpty()) {
      env.putIfAbsent("UCX_NET_DEVICES", String.join(",", fabric.ports()));
    }
    env.put("DASK_DISTRIBUTED_UCXX__CREATE_CUDA_CONTEXT", "True");
    env.put("DASK_DISTRIBUTED_UCXX__CUDA_COPY", "True");
    env.put("DASK_DISTRIBUTED_UCXX__TCP", "True");
    env.put("DASK_DISTRIBUTED_UCXX__NVLINK", "True");
    env.put("DASK_DISTRIBUTED_UCXX__INFINIBAND", tls.contains("rc") ? "True" : "False");
    env.put("DASK_DISTRIBUTED_UCXX__RDMACM", tls.contains("rc") && rdmaInterface ? "True"
        : "False");
    return env;
  }

  /** The worker's switches, the same as the environment's {@code DASK_DISTRIBUTED_UCXX__*}. */
  private static List<String> workerFlags(Map<String, String> env) {
    List<String> f = new ArrayList<>(List.of("--enable-tcp-over-ucx", "--enable-nvlink"));
    f.add(switchFlag(env, "INFINIBAND", "infiniband"));
    f.add(switchFlag(env, "RDMACM", "rdmacm"));
    return f;
  }

  private static String switchFlag(Map<String, String> env, String key, String flag) {
    return (env.get("DASK_DISTRIBUTED_UCXX__" + key).equals("True") ? "--enable-" : "--disable-")
        + flag;
  }
}
