package io.meshplan.cli;

/** The process exit codes, in one place. They are part of the command-line contract. */
public final class ExitCodes {
  /** Success. */
  public static final int OK = 0;
  /** A bug: an unexpected internal error. */
  public static final int INTERNAL = 1;
  /** Bad input: a malformed flag, file or field. */
  public static final int BAD_INPUT = 2;
  /** Infeasible: for example nothing fits in device memory. */
  public static final int INFEASIBLE = 3;

  private ExitCodes() {}
}
