package io.meshplan.doctor;

import io.meshplan.util.TerminalText;
import io.meshplan.util.AsciiDigits;
import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import io.meshplan.util.Units;
import io.meshplan.util.Require;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Reads RDMA ports and network interfaces from a sysfs tree ({@code /sys} or a copy of it).
 *
 * <p>Reads {@code class/infiniband/<dev>/ports/<p>/{state,phys_state,rate,link_layer}}, the GID table
 * ({@code gids/<i>}, {@code gid_attrs/types/<i>}, {@code gid_attrs/ndevs/<i>}) and {@code
 * class/net/<if>/{operstate,type,mtu,address,dev_port,device/infiniband/<dev>}}, and the GPUs'
 * makers from {@code bus/pci/devices/<address>/{class,vendor}}. A file that cannot
 * be read is recorded as a {@link ReadProblem} and skipped, because some reads fail by design on
 * real systems. Expected failures stay silent: the types of zero (unused) GIDs are not read at all,
 * and {@code gid_attrs/ndevs/<i>} (EINVAL on InfiniBand) and {@code dev_port} are optional.
 */
public final class SysfsReader {
  private static final Pattern RATE = Pattern.compile("^\\s*([0-9]+(?:\\.[0-9]+)?)\\s*Gb/sec.*");
  private static final Pattern NUMBERED = Pattern.compile("[0-9]+");
  private static final Pattern PCI_ADDRESS =
      Pattern.compile("[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]");
  private static final Pattern HEX = Pattern.compile("0x[0-9a-fA-F]{1,6}");
  private static final Pattern SIGNED = Pattern.compile("[+-]?[0-9]+");
  /** The most digits a port number or GID index may have: 8, so every one fits an int. */
  private static final int MAX_DIGITS = 8;
  /**
   * The highest port rate meshplan reads, in Gb/s: 10,000, over four times the fastest port the
   * kernel's {@code rate} file can describe (12X XDR, 12 lanes x 200 Gb/s = 2,400 Gb/s); a higher
   * rate is corrupt text, reported and kept unknown like an unparsable one.
   */
  public static final double MAX_RATE_GBPS = 10_000;

  private final Path root;

  /**
   * Creates a reader.
   *
   * @param root the directory standing in for {@code /sys}; it holds {@code class/infiniband} and
   *     {@code class/net}
   * @throws InputException if the root does not exist or is not a directory
   */
  public SysfsReader(Path root) {
    Require.nonNull(root, "sysfs root");
    if (!Files.exists(root)) {
      throw new InputException(
          "sysfs root " + shown(root) + ": no such directory; pass the sysfs mount point (default /sys)");
    }
    if (!Files.isDirectory(root)) {
      throw new InputException(
          "sysfs root " + shown(root) + ": not a directory; pass the sysfs mount point (default /sys)");
    }
    for (String sub : new String[] {"class/infiniband", "class/net"}) {
      Path d = root.resolve(sub);
      if (Files.exists(d) && !Files.isDirectory(d)) {
        throw new InputException("sysfs root " + shown(root) + ": " + sub + " is not a directory;"
            + " this is not a sysfs tree (default /sys)");
      }
    }
    if (!Files.isDirectory(root.resolve("class/net"))
        && !Files.isDirectory(root.resolve("class/infiniband"))) {
      throw new InputException("sysfs root " + shown(root) + ": neither class/net nor"
          + " class/infiniband is there, so this is not a sysfs tree; pass the sysfs mount point"
          + " (default /sys)");
    }
    this.root = root;
  }

  /**
   * Reads the tree.
   *
   * @return the devices, interfaces and problems found
   */
  public SysfsSnapshot read() {
    List<ReadProblem> problems = new ArrayList<>();
    List<DeviceInfo> devices = new ArrayList<>();
    Path ib = root.resolve("class/infiniband");
    if (Files.isDirectory(ib)) {
      for (String dev : named(listDirs(ib, "class/infiniband", problems), ib, "class/infiniband",
          true, problems)) {
        devices.add(readDevice(dev, ib.resolve(dev), problems));
      }
    }
    List<NetInterface> interfaces = new ArrayList<>();
    Path net = root.resolve("class/net");
    if (Files.isDirectory(net)) {
      for (String name : named(listDirs(net, "class/net", problems), net, "class/net", false,
          problems)) {
        interfaces.add(readInterface(name, net.resolve(name), problems));
      }
    }
    return new SysfsSnapshot(devices, interfaces, problems, readGpus(problems));
  }

  /**
   * The GPUs on the PCI bus ({@code bus/pci/devices/<address>/{vendor,class}}): the devices of a
   * GPU class ({@link GpuVendor#gpuClass}) from NVIDIA or AMD, in address order. A tree without
   * {@code bus/pci} has none; an entry whose name is not a PCI address, or whose files are
   * unreadable or not hexadecimal, is skipped as a problem.
   */
  private List<GpuVendor> readGpus(List<ReadProblem> problems) {
    List<GpuVendor> gpus = new ArrayList<>();
    Path pci = root.resolve("bus/pci/devices");
    if (!Files.isDirectory(pci)) {
      return gpus;
    }
    for (String a : listDirs(pci, "bus/pci/devices", problems)) {
      if (!PCI_ADDRESS.matcher(a).matches()) {
        problems.add(new ReadProblem("bus/pci/devices", rel(pci) + "/" + TerminalText.escape(a),
            "not a PCI address such as 0000:0c:00.0; skipped"));
        continue;
      }
      Path dir = pci.resolve(a);
      OptionalInt cls = hex(a, dir.resolve("class"), problems);
      if (cls.isEmpty() || !GpuVendor.gpuClass(cls.getAsInt())) {
        continue;
      }
      OptionalInt vendor = hex(a, dir.resolve("vendor"), problems);
      if (vendor.isPresent()) {
        GpuVendor.ofPci(vendor.getAsInt()).ifPresent(gpus::add);
      }
    }
    return gpus;
  }

  /** A hexadecimal attribute such as {@code 0x10de} or {@code 0x030200}. */
  private OptionalInt hex(String subject, Path file, List<ReadProblem> problems) {
    Optional<String> text = readRequired(subject, file, problems, "device skipped");
    if (text.isEmpty()) {
      return OptionalInt.empty();
    }
    if (!HEX.matcher(text.get()).matches()) {
      problems.add(new ReadProblem(subject, rel(file), "not a hexadecimal number: '"
          + text.get() + "'; device skipped"));
      return OptionalInt.empty();
    }
    return OptionalInt.of(AsciiDigits.parseInt(text.get().substring(2), 16));
  }

  private DeviceInfo readDevice(String dev, Path dir, List<ReadProblem> problems) {
    List<PortInfo> ports = new ArrayList<>();
    Path portsDir = dir.resolve("ports");
    if (Files.isDirectory(portsDir)) {
      for (String p : ports(listDirs(portsDir, dev, problems), portsDir, dev, problems)) {
        ports.add(readPort(dev, AsciiDigits.parseInt(p), portsDir.resolve(p), problems));
      }
    } else {
      problems.add(new ReadProblem(dev, rel(portsDir), "directory missing; device has no ports"));
    }
    return new DeviceInfo(dev, ports);
  }

  private PortInfo readPort(String dev, int port, Path dir, List<ReadProblem> problems) {
    String id = dev + ":" + port;
    String state = readRequired(id, dir.resolve("state"), problems)
        .map(SysfsReader::enumName).orElse(PortInfo.UNKNOWN);
    String phys = readRequired(id, dir.resolve("phys_state"), problems)
        .map(SysfsReader::enumName).orElse(PortInfo.UNKNOWN);
    String linkLayer = readRequired(id, dir.resolve("link_layer"), problems)
        .orElse(PortInfo.UNKNOWN);
    OptionalDouble rate = OptionalDouble.empty();
    Optional<String> rateText = readRequired(id, dir.resolve("rate"), problems);
    if (rateText.isPresent()) {
      Matcher m = RATE.matcher(rateText.get());
      double gbps = m.matches() ? io.meshplan.util.AsciiDigits.parseDecimal(m.group(1))
          : Double.NaN;
      if (gbps > 0 && gbps <= MAX_RATE_GBPS) {
        rate = OptionalDouble.of(gbps);
      } else if (m.matches()) {
        problems.add(new ReadProblem(id, rel(dir.resolve("rate")), "rate '" + rateText.get()
            + "' is not above 0 and at most " + (long) MAX_RATE_GBPS + " Gb/sec (12X XDR is"
            + " 2400); rate unknown"));
      } else {
        problems.add(new ReadProblem(id, rel(dir.resolve("rate")),
            "unexpected content '" + rateText.get() + "' (expected e.g. '200 Gb/sec (4X HDR)')"));
      }
    }
    return new PortInfo(dev, port, state, phys, linkLayer, rate, readGids(id, dir, problems));
  }

  private List<GidEntry> readGids(String id, Path portDir, List<ReadProblem> problems) {
    List<GidEntry> gids = new ArrayList<>();
    Path gidsDir = portDir.resolve("gids");
    if (!Files.isDirectory(gidsDir)) {
      return gids;
    }
    List<String> names = listFiles(gidsDir, id, problems);
    for (String n : names) {
      if (SIGNED.matcher(n).matches() && !numbered(n)) {
        problems.add(new ReadProblem(id, rel(gidsDir) + "/" + TerminalText.escape(n),
            "not a GID index (0 to " + "9".repeat(MAX_DIGITS) + "); skipped"));
      }
    }
    for (String i : numbered(names)) {
      int index = AsciiDigits.parseInt(i);
      Optional<String> address = readRequired(id, gidsDir.resolve(i), problems, "GID " + i + " skipped");
      if (address.isEmpty()) {
        continue;
      }
      GidAddressKind kind;
      try {
        kind = GidAddressKind.of(address.get());
      } catch (IllegalArgumentException e) {
        problems.add(new ReadProblem(id, rel(gidsDir.resolve(i)),
            "malformed GID '" + address.get() + "'; GID " + i + " skipped"));
        continue;
      }
      if (kind == GidAddressKind.ZERO) {
        continue;
      }
      Path typeFile = portDir.resolve("gid_attrs/types").resolve(i);
      Optional<String> typeText = readRequired(id, typeFile, problems, "GID " + i + " skipped");
      if (typeText.isEmpty()) {
        continue;
      }
      Optional<GidType> type = GidType.parse(typeText.get());
      if (type.isEmpty()) {
        problems.add(new ReadProblem(id, rel(typeFile), "unknown GID type '" + typeText.get()
            + "' (expected 'IB/RoCE v1' or 'RoCE v2'); GID " + i + " skipped"));
        continue;
      }
      Path ndev = portDir.resolve("gid_attrs/ndevs").resolve(i);
      String netdev = readOptional(ndev).orElse("");
      if (!netdev.isEmpty() && !SysfsNames.netInterface(netdev)) {
        problems.add(new ReadProblem(id, rel(ndev), "interface name '" + netdev + "' is not"
            + " 1 to 15 letters, digits, '_', '.' or '-'; GID " + i + " has no netdev"));
        netdev = "";
      }
      gids.add(new GidEntry(index, address.get().strip(), kind, type.get(), netdev));
    }
    return gids;
  }

  private NetInterface readInterface(String name, Path dir, List<ReadProblem> problems) {
    String operstate = readRequired(name, dir.resolve("operstate"), problems).orElse("");
    int type = readRequired(name, dir.resolve("type"), problems)
        .map(t -> parseInt(name, dir.resolve("type"), t, problems)).orElse(-1);
    int mtu = readRequired(name, dir.resolve("mtu"), problems)
        .map(t -> parseInt(name, dir.resolve("mtu"), t, problems)).orElse(-1);
    String address = readRequired(name, dir.resolve("address"), problems).orElse("");
    List<String> rdma = new ArrayList<>();
    Path ibDir = dir.resolve("device/infiniband");
    if (Files.isDirectory(ibDir)) {
      rdma.addAll(named(listDirs(ibDir, name, problems), ibDir, name, true, problems));
    }
    int devPort = readOptional(dir.resolve("dev_port"))
        .map(t -> parseInt(name, dir.resolve("dev_port"), t, problems)).orElse(-1);
    return new NetInterface(name, operstate, type, mtu, address, rdma, devPort);
  }

  /**
   * A decimal attribute, or -1 (unknown) with a problem naming it: text that is not digits, or
   * digits past an int (an MTU or type of 2^31 is corrupt text, not a reason to drop the report).
   */
  private int parseInt(String subject, Path file, String text, List<ReadProblem> problems) {
    if (NUMBERED.matcher(text).matches()) {
      try {
        return AsciiDigits.parseInt(text);
      } catch (NumberFormatException e) {
        problems.add(new ReadProblem(subject, rel(file), "'" + text + "' is past "
            + Integer.MAX_VALUE + "; unknown"));
        return -1;
      }
    }
    problems.add(new ReadProblem(subject, rel(file), "not a number: '" + text + "'"));
    return -1;
  }

  /** {@code 4: ACTIVE} gives {@code ACTIVE}; text without a code is kept as it is. */
  private static String enumName(String text) {
    int colon = text.indexOf(':');
    String name = colon >= 0 ? text.substring(colon + 1).strip() : text;
    return name.isEmpty() ? PortInfo.UNKNOWN : name;
  }

  private Optional<String> readRequired(String subject, Path file, List<ReadProblem> problems) {
    return readRequired(subject, file, problems, "ignored");
  }

  private Optional<String> readRequired(
      String subject, Path file, List<ReadProblem> problems, String consequence) {
    try {
      return Optional.of(readAttribute(file));
    } catch (NoSuchFileException e) {
      problems.add(new ReadProblem(subject, rel(file), "unreadable (file missing); " + consequence));
    } catch (IOException e) {
      problems.add(new ReadProblem(subject, rel(file), "unreadable (" + reason(e) + "); " + consequence));
    }
    return Optional.empty();
  }

  private static Optional<String> readOptional(Path file) {
    try {
      String text = readAttribute(file);
      return text.isEmpty() ? Optional.empty() : Optional.of(text);
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /**
   * Keeps the names that are RDMA device names ({@code device}) or interface names, as {@link
   * SysfsNames} accepts them; each other one is a problem, shown escaped, and skipped, so no name
   * that reaches the report, the environment or a script needs quoting or can steer a terminal.
   */
  private List<String> named(List<String> names, Path dir, String subject, boolean device,
      List<ReadProblem> problems) {
    List<String> kept = new ArrayList<>();
    for (String n : names) {
      if (device ? SysfsNames.device(n) : SysfsNames.netInterface(n)) {
        kept.add(n);
      } else {
        problems.add(new ReadProblem(subject, rel(dir) + "/" + TerminalText.escape(n),
            (device ? "RDMA device name is not 1 to 63" : "interface name is not 1 to 15")
                + " letters, digits, '_', '.' or '-'; skipped"));
      }
    }
    return kept;
  }

  /**
   * Reads one attribute (control characters escaped by {@link TerminalText}): only a regular file (a FIFO or device in its place would block or never
   * end) and at most {@link InputFiles#SYSFS_MAX_BYTES}, since the kernel serves one page.
   */
  private static String readAttribute(Path file) throws IOException {
    if (!Files.exists(file)) {
      throw new NoSuchFileException(file.toString());
    }
    if (!Files.isRegularFile(file)) {
      throw new IOException(file + ": not a regular file (a directory, device or FIFO)");
    }
    try (java.io.InputStream in = Files.newInputStream(file)) {
      byte[] b = in.readNBytes((int) InputFiles.SYSFS_MAX_BYTES + 1);
      if (b.length > InputFiles.SYSFS_MAX_BYTES) {
        throw new IOException(file + ": larger than "
            + Units.formatBytes(InputFiles.SYSFS_MAX_BYTES) + ", not a sysfs attribute");
      }
      return TerminalText.escape(new String(b, StandardCharsets.UTF_8).strip());
    }
  }

  private List<String> listDirs(Path dir, String subject, List<ReadProblem> problems) {
    return list(dir, subject, problems, true);
  }

  private List<String> listFiles(Path dir, String subject, List<ReadProblem> problems) {
    return list(dir, subject, problems, false);
  }

  private List<String> list(Path dir, String subject, List<ReadProblem> problems, boolean dirs) {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> Files.isDirectory(p) == dirs)
          .map(p -> p.getFileName().toString())
          .sorted(NaturalOrder.INSTANCE)
          .toList();
    } catch (IOException e) {
      problems.add(new ReadProblem(subject, rel(dir), "unreadable (" + reason(e) + "); directory skipped"));
      return List.of();
    }
  }

  /** Keeps the numeric names, in numeric order. */
  private static List<String> numbered(List<String> names) {
    return names.stream()
        .filter(SysfsReader::numbered)
        .sorted((a, b) -> Integer.compare(AsciiDigits.parseInt(a), AsciiDigits.parseInt(b)))
        .toList();
  }

  /** Whether a name is a port number or GID index: 1 to {@link #MAX_DIGITS} ASCII digits. */
  private static boolean numbered(String name) {
    return NUMBERED.matcher(name).matches() && name.length() <= MAX_DIGITS;
  }

  /**
   * The port directories of a device, in numeric order; each other name under {@code ports} (a
   * kernel writes only port numbers there) is a problem naming it, so that a device whose ports
   * are all skipped does not read as no device.
   */
  private List<String> ports(List<String> names, Path portsDir, String dev,
      List<ReadProblem> problems) {
    // InfiniBand ports are numbered from 1 (the kernel's ib_device ports); a port 0 is not one.
    List<String> out = new ArrayList<>();
    for (String n : names) {
      if (numbered(n) && AsciiDigits.parseInt(n) > 0) {
        out.add(n);
      } else {
        problems.add(new ReadProblem(dev, rel(portsDir) + "/" + TerminalText.escape(n),
            "not a port number (1 to " + "9".repeat(MAX_DIGITS) + "); port skipped"));
      }
    }
    return numbered(out);
  }

  private static String reason(IOException e) {
    String m = e.getMessage();
    String cls = e.getClass().getSimpleName();
    // The JDK puts the path first in most messages; keep only what follows it.
    if (m != null && m.contains(": ")) {
      m = m.substring(m.lastIndexOf(": ") + 2);
    }
    return m == null || m.isBlank() ? cls : m;
  }

  private static String shown(Path root) {
    return TerminalText.escape(root.toString());
  }

  private String rel(Path p) {
    return root.relativize(p).toString().replace('\\', '/');
  }
}
