package io.meshplan.cli;

import io.meshplan.calibrate.BenchmarkLogReader;
import io.meshplan.calibrate.Calibration;
import io.meshplan.calibrate.CatalogBandwidthCheck;
import io.meshplan.calibrate.CalibrationReport;
import io.meshplan.calibrate.MeasuredPoint;
import io.meshplan.calibrate.ParseResult;
import io.meshplan.calibrate.ParseWarning;
import io.meshplan.calibrate.ProfileFiles;
import io.meshplan.calibrate.ProfileFitter;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code meshplan calibrate}: fits a communication profile to benchmark logs. */
@Command(
    name = "calibrate",
    mixinStandardHelpOptions = true,
    description = {
      "Reads nccl-tests logs (text or -J JSON), Alpa profile_communication output and"
          + " all_reduce_bench tables, fits alpha-beta and monotone curves per collective, link level"
          + " and group size, and writes a profile for --profile.",
      "Rows that make no sense are skipped with a file:line warning on stderr.",
      "With --train LOG... it reads Megatron-LM or torchtitan training logs instead (not together"
          + " with FILE): it simulates each run on --cluster's GPU as 'simulate' would and fits"
          + " one compute scale for the GPU's architecture (every kernel time divided by it,"
          + " communication unchanged) so that predicted matches measured iteration time (least"
          + " absolute error on log time), then writes it to the profile's compute section; that profile"
          + " has no collective entries, so collectives keep catalog prices. A log is at most"
          + " 64 MiB with lines of at most 65536 characters, and must be a regular file.",
      "With --train --folds public (or fold names) it fits the compute factor of each GPU"
          + " architecture to the published runs meshplan ships, one fold per software stack,"
          + " and scores it leave-one-stack-out: each fold predicted by a factor fitted without"
          + " it. A factor is kept only where that beats kernel-level prices. The profile it"
          + " writes records each factor's folds and its 90%% band; the profile meshplan ships"
          + " was written by this command."
    })
final class CalibrateCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Parameters(arity = "0..*", paramLabel = "FILE", description = "benchmark logs")
  List<Path> files = new ArrayList<>();

  @Option(names = "--train", arity = "0..*", paramLabel = "LOG",
      description = "Megatron-LM or torchtitan training logs to fit the compute scale to (none "
          + "with --folds)")
  List<Path> train;

  @Option(names = "--folds", split = ",", paramLabel = "FOLD",
      description = "with --train: fit on meshplan's public folds instead of logs: public (all),"
          + " or some of sc21, llm-foundry, megatron-core, nemo, meta, automodel, maxtext, mlperf,"
          + " mlperf-nvidia")
  List<String> folds;

  @Option(names = "--config", paramLabel = "TOML",
      description = "torchtitan's job config (TOML) for its --train logs, which do not state the"
          + " job unless print_config was on")
  Path config;

  @Option(names = "--cluster", paramLabel = "C",
      description = "The cluster the logs were measured on (needed but with --train --folds):"
          + " NODESxGPUS:gpu[:fabric], e.g. 4x8:a100-80gb, or a YAML cluster file")
  String cluster;

  @Mixin CatalogOption catalog = new CatalogOption();

  @Mixin ForceOption force = new ForceOption();

  @Option(names = "--out", required = true, paramLabel = "PROFILE",
      description = "profile to write (.json for JSON, otherwise YAML); never one of the inputs."
          + OutputPaths.FILE_ONLY)
  Path out;

  @Option(names = "--json", description = "print every point with its fitted time as JSON")
  boolean json;

  @Option(names = "--report", description = "print fitted vs measured time for every point")
  boolean report;

  @Override
  public Integer call() {
    PrintWriter stdout = spec.commandLine().getOut();
    PrintWriter stderr = spec.commandLine().getErr();
    if (json && report) {
      throw new InputException("use --json or --report, not both (--json is for machines)");
    }
    if (folds != null) {
      if (train == null || !train.isEmpty() || !files.isEmpty() || config != null
          || cluster != null || report) {
        throw new InputException("--folds fits to the public runs meshplan ships: give it with a "
            + "bare --train and --out, without logs, FILE, --config, --cluster or --report (each "
            + "run states its own cluster)");
      }
      return new FoldTraining(folds, out, force.force, json).run(stdout);
    }
    if (train == null) {
      train = new ArrayList<>();
    } else if (train.isEmpty() && config == null) {
      throw new InputException("--train needs training logs (--train LOG...) or --folds");
    }
    if (cluster == null) {
      throw new InputException("--cluster is needed: the cluster the logs were measured on"
          + " (only --train --folds goes without, as each of its runs states its own)");
    }
    ClusterSpec c = catalog.cluster(cluster);
    if (!train.isEmpty() && !files.isEmpty()) {
      throw new InputException("--train reads training logs and FILE benchmark logs; give one "
          + "kind per run of calibrate (got " + files.size() + " FILE and " + train.size()
          + " --train)");
    }
    if (!train.isEmpty() || config != null) {
      if (report) {
        throw new InputException("--train always prints each run's measured and fitted time; "
            + "drop --report");
      }
      return new TrainCalibration(c, cluster, uniqueFiles(train, stderr), config, out,
          force.force, json).run(stdout, stderr);
    }
    if (files.isEmpty()) {
      throw new InputException("give benchmark logs (FILE...) or training logs (--train LOG...)");
    }
    return fitBenchmarks(c, stdout, stderr);
  }

  /** The collective fit of benchmark logs (the FILE mode). */
  private int fitBenchmarks(ClusterSpec c, PrintWriter stdout, PrintWriter stderr) {
    OutputPaths paths = new OutputPaths().force(force.force).output("--out", out);
    for (Path f : files) {
      paths.input("input", f);
    }
    paths.input("--cluster", CliValues.existingFile(cluster)).input("--catalog", catalog.file).check();
    List<Path> unique = uniqueFiles(stderr);
    BenchmarkLogReader reader = new BenchmarkLogReader(c.gpusPerNode());
    List<MeasuredPoint> points = new ArrayList<>();
    List<ParseWarning> warnings = new ArrayList<>();
    for (Path f : unique) {
      InputFiles.checkRegular(f, "benchmark log");
      ParseResult r = reader.read(f);
      points.addAll(r.points());
      warnings.addAll(r.warnings());
    }
    // Rows --cluster could not have produced: groups larger than it, bandwidths above its links.
    points = io.meshplan.calibrate.PhysicalBandwidth.screen(points, c, warnings);
    for (ParseWarning w : warnings) {
      stderr.println(ExceptionMapper.warning(w.toString()));
    }
    if (points.isEmpty()) {
      throw new InputException("no measurements found in " + files.size() + " file(s) ("
          + files.get(0) + (files.size() > 1 ? ", ..." : "") + "); see the warnings above");
    }
    Calibration cal = new ProfileFitter(c.toShortString()).fit(points);
    for (String d : CatalogBandwidthCheck.doubts(cal.profile(), c)) {
      stderr.println(ExceptionMapper.warning(d));
    }
    ProfileFiles.write(out, cal.profile());
    if (json) {
      stdout.print(CalibrationReport.json(cal, warnings));
    } else {
      stdout.printf("wrote %s: %s from %s in %s%n", out,
          io.meshplan.util.Words.count(cal.profile().entries().size(), "entry"),
          io.meshplan.util.Words.count(points.size(), "point"),
          io.meshplan.util.Words.count(unique.size(), "file"));
      stdout.print(CalibrationReport.entries(cal));
      if (report) {
        stdout.println();
        stdout.print(CalibrationReport.points(cal));
      }
    }
    return ExitCodes.OK;
  }

  /** The log files, each once; a file named twice is read once, with a warning. */
  private List<Path> uniqueFiles(PrintWriter stderr) {
    return uniqueFiles(files, stderr);
  }

  /** Some files, each once; a file named twice is read once, with a warning. */
  private static List<Path> uniqueFiles(List<Path> files, PrintWriter stderr) {
    java.util.Set<Path> seen = new java.util.HashSet<>();
    List<Path> unique = new ArrayList<>();
    for (Path f : files) {
      if (seen.add(io.meshplan.util.AtomicFiles.canonical(f))) {
        unique.add(f);
      } else {
        stderr.println(ExceptionMapper.warning(f + " is given more than once; read once"));
      }
    }
    return unique;
  }
}
