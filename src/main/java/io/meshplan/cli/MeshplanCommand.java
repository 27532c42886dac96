package io.meshplan.cli;

import picocli.CommandLine.Command;

/** The top-level {@code meshplan} command; its subcommands do the work. */
@Command(
    name = "meshplan",
    mixinStandardHelpOptions = true,
    version = "meshplan 0.1.0",
    description = "Plans, simulates and launches distributed training on multi-node GPU clusters.",
    subcommands = {PlanCommand.class, SimulateCommand.class, ShardCommand.class,
        CalibrateCommand.class, BenchCommand.class,
        DoctorCommand.class, ExportCommand.class, DeployCommand.class})
final class MeshplanCommand implements Runnable {
  @picocli.CommandLine.Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }
}
