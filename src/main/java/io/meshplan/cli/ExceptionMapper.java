package io.meshplan.cli;

import io.meshplan.util.InfeasibleException;
import io.meshplan.util.InputException;
import picocli.CommandLine;

/**
 * Maps every exception that leaves a subcommand to an exit code and a one-line message. Only
 * internal errors (bugs) print a stack trace.
 */
final class ExceptionMapper implements CommandLine.IExecutionExceptionHandler {
  @Override
  public int handleExecutionException(
      Exception ex, CommandLine commandLine, CommandLine.ParseResult parseResult) {
    var err = commandLine.getErr();
    if (ex instanceof InputException) {
      err.println("meshplan: error: " + ex.getMessage());
      return ExitCodes.BAD_INPUT;
    }
    if (ex instanceof InfeasibleException) {
      err.println("meshplan: infeasible: " + ex.getMessage());
      return ExitCodes.INFEASIBLE;
    }
    err.println("meshplan: internal error (please report): " + ex);
    ex.printStackTrace(err);
    return ExitCodes.INTERNAL;
  }
}
