package io.meshplan.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine;

/** Process entry point. */
public final class Main {
  private Main() {}

  /**
   * Runs meshplan and exits with its code.
   *
   * @param args the command line
   */
  public static void main(String[] args) {
    System.exit(run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
  }

  /**
   * The command line with what each command's help lists filled in: the presets, config.json
   * model_types, GPUs and fabrics it takes, and {@code --debug}.
   *
   * @param debug whether {@code --debug} was given
   * @return the command line
   */
  static CommandLine commandLine(boolean debug) {
    CommandLine cl = new CommandLine(new MeshplanCommand());
    ModelOptions.describePresets(cl);
    ModelOptions.dropPredictionFlags(cl.getSubcommands().get("shard"));
    ClusterHelp.describe(cl);
    DebugOption.install(cl, debug);
    cl.registerConverter(Integer.class, CliValues::wholeInt);
    cl.registerConverter(Integer.TYPE, CliValues::wholeInt);
    cl.registerConverter(Long.class, CliValues::wholeLong);
    cl.registerConverter(Long.TYPE, CliValues::wholeLong);
    cl.registerConverter(Double.class, CliValues::decimal);
    cl.registerConverter(Double.TYPE, CliValues::decimal);
    cl.registerConverter(java.nio.file.Path.class, CliValues::path);
    return cl;
  }

  /**
   * Runs meshplan with the given writers; tests call this to capture output. {@code --debug}
   * anywhere on the command line makes errors print their stack trace.
   *
   * @param rawOut standard output
   * @param rawErr standard error
   * @param args the command line
   * @return the exit code (see {@link ExitCodes})
   */
  public static int run(PrintWriter rawOut, PrintWriter rawErr, String... args) {
    // Every character an input can smuggle into a message is escaped on the way out.
    PrintWriter out = TerminalWriter.of(rawOut);
    PrintWriter err = TerminalWriter.of(rawErr);
    List<String> rest = new ArrayList<>();
    boolean debug = false;
    for (String a : args) {
      if (a.equals("--debug")) {
        debug = true;
      } else {
        rest.add(a);
      }
    }
    ExceptionMapper mapper = new ExceptionMapper(debug);
    int code;
    try {
      CommandLine cl = commandLine(debug);
      cl.setOut(out);
      cl.setErr(err);
      cl.setExecutionExceptionHandler(mapper);
      cl.setParameterExceptionHandler(
          (ex, a) -> {
            CommandLine c = ex.getCommandLine();
            // One line, as every other failure: the usage hint rides on it.
            c.getErr().println("meshplan: error: " + ExceptionMapper.oneLine(ex.getMessage())
                + ". Try '" + c.getCommandSpec().qualifiedName() + " --help' for usage.");
            return ExitCodes.BAD_INPUT;
          });
      code = cl.execute(rest.toArray(String[]::new));
    } catch (OutOfMemoryError | StackOverflowError | RuntimeException e) {
      code = mapper.handle(e, err);
    }
    out.flush();
    err.flush();
    return code;
  }
}
