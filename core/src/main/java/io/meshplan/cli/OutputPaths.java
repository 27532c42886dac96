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
 * The one output-path check of every command that writes files, run before any work: no output
 * names an input (symbolic links and {@code ..} resolved), each output can be written (no part
 * of its path is a symbolic link, its directory exists, and it is absent or a regular file,
 * never a device, FIFO or directory), no two outputs name the same file, and an output that
 * exists is replaced only when the user gave {@code --force}. An output named {@code -} is
 * refused here: the options where {@code -} means standard output turn it into "no file" first
 * ({@link #stdout}). Writes then go through {@link AtomicFiles}.
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
      // A positional file is named by itself: "is also an input: x.log", not "input x.log".
      inputs.put(label.equals("input") ? file.toString() : label + " " + file, file);
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
      refuseDash(flag, file);
      for (Map.Entry<String, Path> in : inputs.entrySet()) {
        if (AtomicFiles.sameFile(file, in.getValue())) {
          throw new InputException(flag + " " + file + " is also an input: " + in.getKey()
              + "; choose another file, meshplan never overwrites its inputs");
        }
      }
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
      if (!force && Files.exists(file)) {
        throw new InputException(flag + " " + file + " exists; add --force to replace it");
      }
    }
  }

  /** The help's words for an output option that takes a file only. */
  static final String FILE_ONLY = " Never '-' (standard output carries the command's own text)"
      + " and never a symbolic link.";

  /** The help's words for an output option where {@code -} is standard output. */
  static final String DASH_IS_STDOUT = " '-' or none: standard output. Never a symbolic link.";

  /**
   * An output option where {@code -} means standard output, as leaving the option out does.
   *
   * @param file the option's value, or null
   * @return null for {@code -} or null, else the file
   */
  static Path stdout(Path file) {
    return file != null && file.toString().equals("-") ? null : file;
  }

  /**
   * Refuses {@code -} for an output that goes to a file only: standard output carries the
   * command's own text, and a file named {@code -} is what nobody means.
   *
   * @param flag the flag, for the message
   * @param file the value, or null
   * @throws InputException when the value is {@code -}
   */
  static void refuseDash(String flag, Path file) {
    if (file != null && file.toString().equals("-")) {
      throw new InputException(flag + " -: this output goes to a file only, as standard output "
          + "carries the command's own text; name a file (./- for a file named '-')");
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
    write(flag, file, text, false);
  }

  /**
   * Writes one output atomically, as a script ({@code rwxr-xr-x}) or not.
   *
   * @param flag the flag, for messages
   * @param file the target
   * @param text the content
   * @param executable whether it is a script
   * @throws InputException when the write fails; nothing is replaced
   */
  static void write(String flag, Path file, String text, boolean executable) {
    try {
      AtomicFiles.writeString(file, text, executable);
    } catch (IOException e) {
      throw new InputException(flag + " " + file + ": cannot write: " + InputFiles.describe(e),
          e);
    }
  }
}
