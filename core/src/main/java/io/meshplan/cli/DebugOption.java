package io.meshplan.cli;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * {@code --debug}, which every command takes anywhere on its command line: {@link Main} takes it
 * out before parsing (so it needs no place in each command's options), and this class lists it
 * in every command's help and passes it to what it changes: the stack trace of an error ({@link
 * ExceptionMapper}) and the engine's own log with {@code --spark} ({@link ExecutorOptions}).
 */
final class DebugOption {
  /** The help of {@code --debug}. */
  static final String DESCRIPTION = "Print the stack trace of an error after its one line, and"
      + " with --spark let Spark log its warnings and errors on standard error.";

  private DebugOption() {}

  /**
   * Lists {@code --debug} in the help of every command and hands its value to the executor
   * options of the commands that have them.
   *
   * @param root the meshplan command line
   * @param debug whether {@code --debug} was given
   */
  static void install(CommandLine root, boolean debug) {
    for (CommandLine sub : root.getSubcommands().values()) {
      CommandSpec spec = sub.getCommandSpec();
      if (spec.userObject() instanceof CommandLine.HelpCommand) {
        continue;
      }
      spec.addOption(OptionSpec.builder("--debug").type(boolean.class).arity("0")
          .description(DESCRIPTION).build());
      var mixin = spec.mixins().get("executor");
      if (mixin != null && mixin.userObject() instanceof ExecutorOptions eo) {
        eo.engineLog = debug;
      }
    }
  }
}
