package io.meshplan.cli;

import java.io.PrintWriter;
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
   * Runs meshplan with the given writers; tests call this to capture output.
   *
   * @param out standard output
   * @param err standard error
   * @param args the command line
   * @return the exit code (see {@link ExitCodes})
   */
  public static int run(PrintWriter out, PrintWriter err, String... args) {
    CommandLine cl = new CommandLine(new MeshplanCommand());
    cl.setOut(out);
    cl.setErr(err);
    cl.setExecutionExceptionHandler(new ExceptionMapper());
    cl.setParameterExceptionHandler(
        (ex, a) -> {
          ex.getCommandLine().getErr().println("meshplan: error: " + ex.getMessage());
          ex.getCommandLine().getErr().println("Try 'meshplan " + ex.getCommandLine().getCommandName()
              + " --help' for usage.");
          return ExitCodes.BAD_INPUT;
        });
    int code = cl.execute(args);
    out.flush();
    err.flush();
    return code;
  }
}
