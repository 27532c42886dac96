package io.meshplan.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** The top-level {@code meshplan} command; its subcommands do the work. */
@Command(
    name = "meshplan",
    mixinStandardHelpOptions = true,
    version = "meshplan 0.1.0",
    description = "Plans how to train a model on a GPU cluster (pipeline stages and shardings), "
        + "simulates the iteration, calibrates the collective cost model on the fabric, checks "
        + "InfiniBand/RoCE setup, and writes framework configurations and launch manifests.",
    footer = {"", "Add --debug to any command to print the stack trace of an error.",
        "Exit codes: 0 success, 2 bad input, 3 infeasible, 1 internal error.",
        "'meshplan help COMMAND' or 'meshplan COMMAND --help' shows a command's options."},
    subcommands = {PlanCommand.class, SimulateCommand.class, SweepCommand.class, ShardCommand.class,
        CalibrateCommand.class, BenchCommand.class, DoctorCommand.class, ExportCommand.class,
        DeployCommand.class, ReplanCommand.class, HelpCommand.class})
final class MeshplanCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  /** Without a command: the usage on stderr and exit 2, as for any missing argument. */
  @Override
  public Integer call() {
    var err = spec.commandLine().getErr();
    err.println("meshplan: error: missing command");
    spec.commandLine().usage(err);
    return ExitCodes.BAD_INPUT;
  }
}
