package io.meshplan.cli;

import io.meshplan.calibrate.BenchPlan;
import io.meshplan.calibrate.BenchRun;
import io.meshplan.calibrate.Launcher;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.util.AtomicFiles;
import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code meshplan bench}: writes the nccl-tests commands that {@code calibrate} reads back. */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description = {
      "Writes the nccl-tests commands (all_reduce, all_gather, reduce_scatter, alltoall, sendrecv"
          + " on 1 node, 2 nodes and all nodes) and a script that runs them and tees each into a"
          + " log that 'meshplan calibrate' reads back.",
      "Without --out the script is printed (after the local check's lines, as comments, with"
          + " --check-local)."
    })
final class BenchCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--cluster", required = true, paramLabel = "C",
      description = "NODESxGPUS:gpu[:fabric] or a YAML cluster file")
  String cluster;

  @Option(names = "--launcher", paramLabel = "L", defaultValue = "mpirun",
      completionCandidates = Choices.Launchers.class,
      description = "how the benchmarks start, one of: ${COMPLETION-CANDIDATES} (default:"
          + " ${DEFAULT-VALUE})")
  String launcher;

  @Mixin CatalogOption catalog = new CatalogOption();

  @Mixin ForceOption force = new ForceOption();

  @Option(names = "--out", paramLabel = "DIR",
      description = "directory for run_benchmarks.sh and commands.txt; '-' or none: print the"
          + " script on standard output. Never a symbolic link, nor a path through one.")
  Path out;

  @Option(names = "--check-local",
      description = "also run a short all_reduce_perf on this node's GPUs (found in "
          + "$NCCL_TESTS/build or on PATH; refused when it is in neither) and compare it with the "
          + "catalog NVLink bandwidth")
  boolean checkLocal;

  /** Runs all_reduce_perf on this node, or refuses when it is not built here. */
  private static java.util.List<String> localCheck(ClusterSpec cs) {
    Path bin = io.meshplan.calibrate.LocalCheck.find(System.getenv("NCCL_TESTS"),
        System.getenv("PATH"));
    if (bin == null) {
      throw new InputException("--check-local: all_reduce_perf not found in $NCCL_TESTS/build "
          + "or on PATH; build nccl-tests on a GPU node and set NCCL_TESTS, or drop "
          + "--check-local to only write the commands");
    }
    return new io.meshplan.calibrate.LocalCheck(cs, bin, 300).run();
  }

  @Override
  public Integer call() {
    Launcher l = Launcher.valueOf(Choices.pick("--launcher", launcher,
        new Choices.Launchers()).toUpperCase(Locale.ROOT));
    ClusterSpec cs = catalog.cluster(cluster);
    if (cs.gpuCount() == 1) {
      // One GPU has no collective to time: every run would measure a group of 1, which
      // calibrate then refuses.
      throw new InputException("--cluster " + cs.toShortString() + " has 1 GPU, and a collective "
          + "needs 2 or more; give the cluster the job runs on");
    }
    BenchPlan plan = new BenchPlan(cs, l);
    PrintWriter stdout = spec.commandLine().getOut();
    out = OutputPaths.stdout(out);
    if (checkLocal) {
      // Without --out the check's lines lead the printed script as comments, so it still runs.
      String prefix = out == null ? "# " : "";
      for (String line : localCheck(cs)) {
        stdout.println(prefix + line);
      }
    }
    if (out == null) {
      stdout.print(plan.script());
      return ExitCodes.OK;
    }
    StringBuilder commands = new StringBuilder();
    for (BenchRun r : plan.runs()) {
      commands.append(r.command()).append('\n');
    }
    if (Files.exists(out) && !Files.isDirectory(out)) {
      throw new InputException("--out " + out + ": exists and is not a directory; --out names a"
          + " directory for run_benchmarks.sh and commands.txt");
    }
    AtomicFiles.directoryProblem(out).ifPresent(why -> {
      throw new InputException("--out " + out + ": " + why);
    });
    try {
      AtomicFiles.createDirectories(out);
    } catch (IOException e) {
      throw new InputException("--out " + out + ": cannot create the directory: "
          + InputFiles.describe(e), e);
    }
    Path script = out.resolve("run_benchmarks.sh");
    Path list = out.resolve("commands.txt");
    new OutputPaths().force(force.force).output("--out (run_benchmarks.sh)", script)
        .output("--out (commands.txt)", list).input("--cluster", CliValues.existingFile(cluster))
        .input("--catalog", catalog.file)
        .check();
    OutputPaths.write("--out", script, plan.script(), true);
    OutputPaths.write("--out", list, commands.toString());
    stdout.printf("wrote %s and %s (%d runs)%n", out.resolve("run_benchmarks.sh"),
        out.resolve("commands.txt"), plan.runs().size());
    return ExitCodes.OK;
  }
}
