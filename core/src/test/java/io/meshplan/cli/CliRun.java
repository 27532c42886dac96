package io.meshplan.cli;

import java.io.PrintWriter;
import java.io.StringWriter;

/**
 * One captured run of the command line.
 *
 * @param code the exit code
 * @param out standard output
 * @param err standard error
 */
record CliRun(int code, String out, String err) {
  /**
   * Runs meshplan in-process.
   *
   * @param args the command line
   * @return what it printed and returned
   */
  static CliRun of(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Main.run(new PrintWriter(out), new PrintWriter(err), args);
    return new CliRun(code, out.toString(), err.toString());
  }
}
