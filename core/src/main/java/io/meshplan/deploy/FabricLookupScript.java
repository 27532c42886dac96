package io.meshplan.deploy;

import io.meshplan.doctor.FabricVariable;
import io.meshplan.util.Require;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The bash that finds, in a pod with its own network and RDMA namespaces, the fabric variables
 * that the doctor's report holds only for the node it read ({@link ProcessFabric}), by the
 * doctor's own rules: the ports are the {@code ACTIVE} ports of the fabric's link layer at the
 * highest rate among them ({@code doctor.EnvAdvisor}), written {@code =dev:port,...} for {@code
 * NCCL_IB_HCA} and {@code dev:port,...} for {@code UCX_NET_DEVICES}; on RoCE the GID index is the
 * first port's, by {@link GidLookupScript}. NCCL reads {@code NCCL_IB_HCA} as a filter that each
 * device it opens is matched against, so the order of the ports does not matter to it; they are
 * listed in byte order of their names. Sysfs is {@code $MESHPLAN_SYSFS_ROOT}, default {@code
 * /sys}. A pod that has no such port stops with one line on standard error rather than let NCCL
 * fall back to sockets in silence.
 *
 * <p>The Kubernetes targets ship it as {@value #FILE} in a ConfigMap mounted at {@value #MOUNT}:
 * sourced ({@code . fabric.sh}, before KubeRay's {@code ray start}) it exports the variables; run
 * ({@code bash fabric.sh COMMAND...}) it exports them and replaces itself with the command. The
 * RunAI node script calls its function {@code meshplan_fabric} itself.
 */
final class FabricLookupScript {
  /** Where the Kubernetes targets mount the ConfigMap that holds the script. */
  static final String MOUNT = RayEntrypoint.MOUNT;
  /** The script's file name in that ConfigMap. */
  static final String FILE = "fabric.sh";
  /** The script's path in the pods. */
  static final String PATH = MOUNT + "/" + FILE;

  private static final String PORTS_FUNCTION = """
      # Prints the ACTIVE ports of link layer $1 at the highest rate among them, as device:port,
      # one a line: the ports 'meshplan doctor' selects.
      meshplan_rdma_ports() {
        local root="${MESHPLAN_SYSFS_ROOT:-/sys}/class/infiniband" p dev num state layer rate
        local tenths best=-1
        local -a found=()
        for p in "$root"/*/ports/*; do
          num="${p##*/}"
          dev="${p%/ports/*}"
          dev="${dev##*/}"
          [[ "$num" =~ ^[0-9]{1,8}$ && "$dev" =~ ^[A-Za-z0-9_.-]{1,63}$ ]] || continue
          state="$(cat -- "$p/state" 2>/dev/null)" || continue
          [[ "${state#*: }" == ACTIVE ]] || continue
          layer="$(cat -- "$p/link_layer" 2>/dev/null)" || continue
          [[ "$layer" == "$1" ]] || continue
          rate="$(cat -- "$p/rate" 2>/dev/null)" || rate=""
          tenths=0
          if [[ "$rate" =~ ^[[:space:]]*([0-9]{1,9})(\\.([0-9]))?[0-9]*[[:space:]]*Gb/sec ]]; then
            tenths=$((10#${BASH_REMATCH[1]} * 10 + 10#${BASH_REMATCH[3]:-0}))
          fi
          if ((tenths > best)); then
            best="$tenths"
            found=("$dev:$((10#$num))")
          elif ((tenths == best)); then
            found+=("$dev:$((10#$num))")
          fi
        done
        ((${#found[@]} > 0)) || return 1
        printf '%s\\n' "${found[@]}"
      }
      """;

  private FabricLookupScript() {}

  /**
   * The functions: {@code meshplan_gid_index} when a GID index is found, {@code
   * meshplan_rdma_ports}, and {@code meshplan_fabric}, which exports the variables or returns 1
   * after one line on standard error.
   *
   * @param fabric the pod's view; it finds at least one variable
   * @return bash text, ending in a newline
   */
  static String functions(ProcessFabric fabric) {
    List<FabricVariable> vars = fabric.foundAtStart();
    Require.that(!vars.isEmpty(), "nothing to find in the pod");
    String layer = fabric.roce() ? "Ethernet" : "InfiniBand";
    StringBuilder sb = new StringBuilder();
    boolean gid = vars.contains(FabricVariable.NCCL_IB_GID_INDEX);
    if (gid) {
      sb.append(GidLookupScript.FUNCTION).append('\n');
    }
    sb.append(PORTS_FUNCTION).append('\n');
    sb.append("# Exports ").append(vars.stream().map(Enum::name)
        .collect(Collectors.joining(", "))).append(" as this pod's own.\n");
    sb.append("meshplan_fabric() {\n");
    sb.append("  local ports").append(gid ? " first gid" : "").append('\n');
    sb.append("  if ! ports=\"$(meshplan_rdma_ports ").append(layer).append(")\"; then\n");
    sb.append("    echo \"meshplan: no ACTIVE ").append(layer).append(" RDMA port under")
        .append(" ${MESHPLAN_SYSFS_ROOT:-/sys}/class/infiniband in this pod; was it given the")
        .append(" RDMA device?\" >&2\n");
    sb.append("    return 1\n");
    sb.append("  fi\n");
    if (vars.contains(FabricVariable.NCCL_IB_HCA)) {
      sb.append("  export NCCL_IB_HCA=\"=${ports//$'\\n'/,}\"\n");
    }
    if (vars.contains(FabricVariable.UCX_NET_DEVICES)) {
      sb.append("  export UCX_NET_DEVICES=\"${ports//$'\\n'/,}\"\n");
    }
    if (gid) {
      sb.append("  first=\"${ports%%$'\\n'*}\"\n");
      sb.append("  if ! gid=\"$(meshplan_gid_index \"${first%:*}\" \"${first##*:}\")\"; then\n");
      sb.append("    echo \"meshplan: no usable RoCE GID on $first in this pod\" >&2\n");
      sb.append("    return 1\n");
      sb.append("  fi\n");
      sb.append("  export NCCL_IB_GID_INDEX=\"$gid\"\n");
    }
    sb.append("}\n");
    return sb.toString();
  }

  /**
   * The whole file for the ConfigMap.
   *
   * @param fabric the pod's view; it finds at least one variable
   * @return the script
   */
  static String file(ProcessFabric fabric) {
    String names = fabric.foundAtStart().stream().map(Enum::name)
        .collect(Collectors.joining(", "));
    ScriptText s = ScriptText.bash()
        .comment("Written by meshplan deploy. Finds this pod's own " + names)
        .comment("when it starts: a pod with its own network and RDMA namespaces has other device")
        .comment("names and GID indices than the node that 'meshplan doctor' read.")
        .comment("Sourced ('. " + PATH + "') it exports them; run")
        .comment("('bash " + PATH + " COMMAND...') it exports them, then runs COMMAND.")
        .line("")
        .line(functions(fabric).stripTrailing())
        .line("")
        .line("meshplan_fabric || exit 1")
        .line("if [[ \"${BASH_SOURCE[0]}\" == \"$0\" && $# -gt 0 ]]; then")
        .line("  exec \"$@\"")
        .line("fi");
    return s.text();
  }
}
