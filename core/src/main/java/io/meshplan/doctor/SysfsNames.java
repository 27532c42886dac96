package io.meshplan.doctor;

import java.util.regex.Pattern;

/**
 * The names the doctor reads from sysfs directory listings and writes into the environment it
 * recommends: RDMA devices ({@code mlx5_0}, {@code mlx5_bond_0}), network interfaces ({@code
 * ib0}, {@code ens1f0np0}) and their {@code device:port} pairs. Linux refuses an interface name of
 * {@code IFNAMSIZ} (16) bytes or more, {@code .}, {@code ..}, and any with {@code /}, {@code :}
 * or white space ({@code dev_valid_name}, {@code net/core/dev.c}; {@code include/uapi/linux/if.h});
 * an RDMA device name has fewer than {@code IB_DEVICE_NAME_MAX} (64) bytes ({@code
 * include/uapi/rdma/ib_user_verbs.h}). Within those limits the doctor keeps to letters, digits,
 * {@code _}, {@code .} and {@code -}, the characters the kernel's and udev's names use, so that a
 * name never needs quoting in a script, a YAML file or a terminal; a name outside them is
 * skipped with a warning rather than echoed.
 */
public final class SysfsNames {
  private static final Pattern DEVICE = Pattern.compile("[A-Za-z0-9_.-]{1,63}");
  private static final Pattern INTERFACE = Pattern.compile("[A-Za-z0-9_.-]{1,15}");
  private static final Pattern PORT_NUMBER = Pattern.compile("0|[1-9][0-9]{0,7}");

  private SysfsNames() {}

  /**
   * Whether a name is one the doctor accepts for an RDMA device.
   *
   * @param name the name
   * @return true for, e.g., {@code mlx5_0}
   */
  public static boolean device(String name) {
    return name != null && DEVICE.matcher(name).matches() && !dots(name);
  }

  /**
   * Whether a name is one the doctor accepts for a network interface.
   *
   * @param name the name
   * @return true for, e.g., {@code ib0}
   */
  public static boolean netInterface(String name) {
    return name != null && INTERFACE.matcher(name).matches() && !dots(name);
  }

  /**
   * Whether text is a {@code device:port} pair as the doctor writes it (port in decimal, no
   * leading zero; sysfs numbers ports from 1, and the reader takes numbers of at most 8 digits).
   *
   * @param text the text
   * @return true for, e.g., {@code mlx5_0:1}
   */
  public static boolean port(String text) {
    if (text == null) {
      return false;
    }
    int colon = text.lastIndexOf(':');
    return colon > 0 && device(text.substring(0, colon))
        && PORT_NUMBER.matcher(text.substring(colon + 1)).matches();
  }

  private static boolean dots(String name) {
    return name.equals(".") || name.equals("..");
  }
}
