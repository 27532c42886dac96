package io.meshplan.deploy;

import io.meshplan.util.Require;
import java.util.List;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The fabric side of a launch: the NCCL/UCX environment every rank gets, and the RDMA ports it was
 * derived from (from {@code meshplan doctor --json}, or given by hand).
 *
 * @param env environment variables by name, sorted; names are shell identifiers
 * @param ports the RDMA ports NCCL uses, as {@code device:port}, in the doctor's order
 * @param roce whether those ports are RoCE (Ethernet link layer), so a GID index is needed
 */
public record FabricEnv(SortedMap<String, String> env, List<String> ports, boolean roce) {
  private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final Pattern PORT = Pattern.compile("[A-Za-z0-9_.-]+:[0-9]+");

  /** Validates names and ports and copies the collections. */
  public FabricEnv {
    Require.nonNull(env, "env");
    env = new TreeMap<>(env);
    for (var e : env.entrySet()) {
      Require.that(NAME.matcher(e.getKey()).matches(), "environment variable name '"
          + e.getKey() + "' is not a shell identifier (letters, digits, _; not starting with a"
          + " digit)");
      Require.nonNull(e.getValue(), "value of " + e.getKey());
      Require.that(e.getValue().indexOf('\0') < 0, "value of " + e.getKey()
          + " holds a NUL character");
    }
    ports = List.copyOf(ports);
    for (String p : ports) {
      Require.that(PORT.matcher(p).matches(), "RDMA port '" + p
          + "' is not device:port such as mlx5_0:1");
    }
  }

  /**
   * An environment with no RDMA ports.
   *
   * @param env the variables
   * @return the fabric
   */
  public static FabricEnv of(SortedMap<String, String> env) {
    return new FabricEnv(env, List.of(), false);
  }

  /**
   * This fabric with more variables; a name given here replaces the same name.
   *
   * @param more the variables to add
   * @return the merged fabric
   */
  public FabricEnv with(SortedMap<String, String> more) {
    TreeMap<String, String> m = new TreeMap<>(env);
    m.putAll(more);
    return new FabricEnv(m, ports, roce);
  }

  /**
   * The network interface for sockets and IPoIB: {@code NCCL_SOCKET_IFNAME} when it names one
   * interface.
   *
   * @return the interface, or empty
   */
  public Optional<String> socketInterface() {
    String v = env.get("NCCL_SOCKET_IFNAME");
    if (v == null || !Pattern.matches("[A-Za-z0-9_.-]+", v)) {
      return Optional.empty();
    }
    return Optional.of(v);
  }
}
