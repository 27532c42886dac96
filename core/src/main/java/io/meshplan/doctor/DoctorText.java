package io.meshplan.doctor;

import io.meshplan.util.TerminalText;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Renders a {@link DoctorReport} for people: a table with one row per port (rate in Gb/s), the
 * {@code export} lines to paste, then the warnings.
 */
public final class DoctorText {
  private static final Pattern SHELL_SAFE = Pattern.compile("[A-Za-z0-9_.,:/=+-]+");
  private static final String[] HEADER = {
    "DEVICE", "PORT", "STATE", "PHYS", "LINK", "RATE(Gb/s)", "GID", "GID NOTE", "NETDEV", "USED"
  };

  private DoctorText() {}

  /**
   * Renders the report.
   *
   * @param report the report
   * @param sysfsRoot the root that was read, shown (control characters escaped) in the first line
   * @return the text, ending with a newline
   */
  public static String format(DoctorReport report, String sysfsRoot) {
    StringBuilder sb = new StringBuilder();
    sb.append("sysfs root: ").append(TerminalText.escape(sysfsRoot)).append('\n').append('\n');
    List<String[]> rows = new ArrayList<>();
    rows.add(HEADER);
    for (DeviceReport d : report.devices()) {
      for (PortReport p : d.ports()) {
        PortInfo i = p.info();
        rows.add(new String[] {
          d.name(),
          Integer.toString(i.port()),
          i.state(),
          i.physState(),
          i.linkLayer(),
          i.rateGbps().isPresent() ? EnvAdvisor.gbps(i.rateGbps().getAsDouble()) : "?",
          p.gid().map(g -> Integer.toString(g.index())).orElse("-"),
          p.gidNote(),
          p.netdev().isEmpty() ? "-" : p.netdev(),
          p.selected() ? "yes" : "no"
        });
      }
    }
    if (rows.size() == 1) {
      sb.append("no RDMA ports found\n");
    } else {
      appendTable(sb, rows);
    }
    sb.append('\n').append("# environment to export:\n");
    for (Map.Entry<String, String> e : report.env().entrySet()) {
      sb.append("export ").append(e.getKey()).append('=').append(quote(e.getValue())).append('\n');
    }
    sb.append('\n');
    if (report.warnings().isEmpty()) {
      sb.append("no warnings\n");
    } else {
      sb.append("warnings (").append(report.warnings().size()).append("):\n");
      for (String w : report.warnings()) {
        sb.append("  - ").append(w).append('\n');
      }
    }
    return sb.toString();
  }

  private static void appendTable(StringBuilder sb, List<String[]> rows) {
    int[] width = new int[HEADER.length];
    for (String[] r : rows) {
      for (int c = 0; c < r.length; c++) {
        width[c] = Math.max(width[c], r[c].length());
      }
    }
    for (String[] r : rows) {
      StringBuilder line = new StringBuilder();
      for (int c = 0; c < r.length; c++) {
        line.append(r[c]);
        if (c < r.length - 1) {
          line.append(" ".repeat(width[c] - r[c].length() + 2));
        }
      }
      sb.append(line.toString().stripTrailing()).append('\n');
    }
  }

  private static String quote(String value) {
    if (SHELL_SAFE.matcher(value).matches()) {
      return value;
    }
    return "'" + value.replace("'", "'\\''") + "'";
  }
}
