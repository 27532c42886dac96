package io.meshplan.cli;

import io.meshplan.cluster.FabricCatalog;
import io.meshplan.cluster.GpuCatalog;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;

/**
 * The GPU and fabric names that {@code --cluster NODESxGPUS:gpu[:fabric]} takes, listed in the
 * help of every command with that option, from the catalogs that parse them (GPU short names
 * such as {@code h100} included), so that the help lists exactly what is accepted.
 */
final class ClusterHelp {
  private ClusterHelp() {}

  /**
   * Appends the lists to the footer of every command that takes {@code --cluster}.
   *
   * @param root the meshplan command line
   */
  static void describe(CommandLine root) {
    for (CommandLine sub : root.getSubcommands().values()) {
      CommandSpec spec = sub.getCommandSpec();
      if (spec.findOption("--cluster") == null) {
        continue;
      }
      List<String> lines = new ArrayList<>(List.of(spec.usageMessage().footer()));
      int at = lines.isEmpty() || !lines.get(0).isEmpty() ? 0 : firstAfterLists(lines);
      List<String> add = new ArrayList<>(List.of("", "GPUs (--cluster NODESxGPUS:gpu[:fabric]):"));
      add.addAll(ModelOptions.wrapped(GpuCatalog.acceptedNames()));
      add.addAll(List.of("", "Fabrics (--cluster NODESxGPUS:gpu:fabric):"));
      add.addAll(ModelOptions.wrapped(FabricCatalog.names()));
      lines.addAll(at, add);
      spec.usageMessage().footer(lines.toArray(String[]::new));
    }
  }

  /** Where the model lists at the head of a footer end (after its last indented line). */
  private static int firstAfterLists(List<String> lines) {
    int end = 0;
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).startsWith("  ")) {
        end = i + 1;
      }
    }
    return end;
  }
}
