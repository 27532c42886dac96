package io.meshplan.cli;

import picocli.CommandLine.Option;

/**
 * The {@code --force} flag of every command that writes files: without it an output that exists
 * is refused before any work; with it a regular file that is no input is replaced (see {@link
 * OutputPaths}); a symbolic link is refused either way.
 */
final class ForceOption {
  /** The help of {@code --force}, the same for every command. */
  static final String DESCRIPTION = "Replace output files that exist (never an input, never"
      + " anything but a regular file). An output that is a symbolic link, or whose path passes"
      + " through one, is refused with or without --force: meshplan never writes through a"
      + " link.";

  @Option(names = "--force", description = DESCRIPTION)
  boolean force;
}
