package io.meshplan.cli;

import picocli.CommandLine.Option;

/**
 * The {@code --force} flag of every command that writes files: without it an output that exists
 * is refused before any work; with it a regular file that is no input is replaced (see {@link
 * OutputPaths}).
 */
final class ForceOption {
  @Option(names = "--force", description = "Replace output files that exist (never an input, "
      + "never anything but a regular file).")
  boolean force;
}
