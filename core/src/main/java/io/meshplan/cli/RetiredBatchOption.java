package io.meshplan.cli;

import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code --batch} of the commands that price a training iteration: hidden, and refused with
 * a pointer to the flags that set the batch there. Only shard's forward graph has one batch;
 * an iteration has a global batch split into microbatches.
 */
final class RetiredBatchOption {
  @Spec(Spec.Target.MIXEE)
  CommandSpec spec;

  /**
   * Refuses the flag.
   *
   * @param value the batch given
   * @throws ParameterException always, naming the flags to use
   */
  @Option(names = "--batch", hidden = true, paramLabel = "N")
  void refuse(String value) {
    String split = spec.optionsMap().containsKey("--micro-batch")
        ? "--micro-batch (sequences per microbatch)" : "--microbatches (microbatches per iteration)";
    throw new ParameterException(spec.commandLine(), "--batch " + value + " only sets the batch "
        + "of shard's forward graph; " + spec.name() + " takes --global-batch (sequences per "
        + "iteration) and " + split);
  }
}
