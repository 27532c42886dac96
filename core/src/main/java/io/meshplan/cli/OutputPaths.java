package io.meshplan.cli;

import io.meshplan.util.AtomicFiles;
import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The one output-path check of every command that writes files, run before any work: each output
 * can be written (its directory exists, and it is absent or a regular file, never a device, FIFO
 * or directory), no two outputs name the same file, no output names an input (symbolic links
 * and {@code ..} resolved), and an output that exists is replaced only when the user gave {@code
 * --force}. Writes then go through {@link AtomicFiles}.
 */
final class OutputPaths {
  private final Map<String, Path> outputs = new LinkedHashMap<>();
  private final Map<String, Path> inputs = new LinkedHashMap<>();
  private boolean force;

  /**
   * Sets whether outputs that exist may be replaced ({@code --force}); inputs never are.
   *
   * @param replace true when {@code --force} was given
   * @return this
   */
  OutputPaths force(boolean replace) {
    this.force = replace;
    return this;
  }

  /**
   * Adds an output.
   *
   * @param label the flag and, for files inside a directory, the file (e.g. "--out DIR")
   * @param file the path, or null when the flag was not given
   * @return this
   */
  OutputPaths output(String label, Path file) {
    if (file != null) {
      outputs.put(label, file);
    }
    return this;
  }

  /**
   * Adds an input that no output may overwrite.
   *
   * @param label the flag or "input" for positional files
   * @param file the path, or null
   * @return this
   */
  OutputPaths input(String label, Path file) {
    if (file != null) {
      inputs.put(label + " " + file, file);
    }
    return this;
  }

  /**
   * Records several inputs.
   *
   * @param files flag to file
   * @return this
   */
  OutputPaths inputs(Map<String, Path> files) {
    files.forEach(this::input);
    return this;
  }

  /**
   * Checks every rule in the class comment.
   *
   * @throws InputException naming the flag and the file that breaks a rule
   */
  void check() {
    List<Map.Entry<String, Path>> outs = new ArrayList<>(outputs.entrySet());
    for (int i = 0; i < outs.size(); i++) {
      String flag = outs.get(i).getKey();
      Path file = outs.get(i).getValue();
      Optional<String> problem = AtomicFiles.problem(file);
      if (problem.isPresent()) {
        throw new InputException(flag + " " + file + ": " + problem.get());
      }
      for (int j = 0; j < i; j++) {
        if (AtomicFiles.sameFile(file, outs.get(j).getValue())) {
          throw new InputException(flag + " " + file + " and " + outs.get(j).getKey() + " "
              + outs.get(j).getValue() + " name the same file; give each output its own file");
        }
      }
      for (Map.Entry<String, Path> in : inputs.entrySet()) {
        if (AtomicFiles.sameFile(file, in.getValue())) {
          throw new InputException(flag + " " + file + " is also the input " + in.getKey()
              + "; choose another file, meshplan never overwrites its inputs");
        }
      }
      if (!force && Files.exists(file)) {
        throw new InputException(flag + " " + file + " exists; add --force to replace it");
      }
    }
  }

  /**
   * Writes one output atomically.
   *
   * @param flag the flag, for messages
   * @param file the target
   * @param text the content
   * @throws InputException when the write fails (for example a full disk); nothing is replaced
   */
  static void write(String flag, Path file, String text) {
    try {
      AtomicFiles.writeString(file, text);
    } catch (IOException e) {
      throw new InputException(flag + " " + file + ": cannot write: " + InputFiles.describe(e),
          e);
    }
  }
}
