package io.meshplan.cli;

import io.meshplan.graph.CallInliner;
import io.meshplan.graph.Graph;
import io.meshplan.graph.HloModule;
import io.meshplan.graph.HloParser;
import io.meshplan.util.InputException;
import io.meshplan.util.InputFiles;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Reads the HLO text of a training step for {@code plan --hlo} and {@code simulate --plan}: the
 * file is read once, its SHA-256 taken from the bytes that are parsed, and its entry computation
 * inlined.
 *
 * @param graph the module's entry computation with its calls inlined, named after the module
 * @param sha256 the SHA-256 of the file's bytes, lower-case hexadecimal
 */
record HloInput(Graph graph, String sha256) {
  /**
   * Reads a module; its parser's warnings go to {@code err}.
   *
   * @param file the HLO text file
   * @param flag the flag or field that named it, for messages
   * @param err standard error
   * @return the module
   * @throws InputException when the file cannot be read, is not HLO text, or has more than {@link
   *     ShardCommand#MAX_INSTRUCTIONS} instructions once inlined
   */
  static HloInput read(Path file, String flag, PrintWriter err) {
    byte[] bytes = InputFiles.readBytes(file, InputFiles.HLO_MAX_BYTES, "HLO text module");
    HloModule module = new HloParser().parse(new String(bytes, StandardCharsets.UTF_8),
        file.toString());
    CallInliner.Result result = CallInliner.inline(module);
    Graph inlined = result.graph();
    Graph graph = new Graph(module.name(), inlined.instructions(), inlined.aliases());
    if (graph.size() > ShardCommand.MAX_INSTRUCTIONS) {
      throw new InputException(flag + " " + file + " has " + graph.size() + " instructions "
          + "after inlining, more than the limit of " + ShardCommand.MAX_INSTRUCTIONS);
    }
    for (String warning : module.warnings()) {
      err.println(ExceptionMapper.warning(warning));
    }
    result.depthWarning().ifPresent(w -> err.println(ExceptionMapper.warning(w)));
    err.flush();
    return new HloInput(graph, sha256(bytes));
  }

  /**
   * The SHA-256 of some bytes.
   *
   * @param bytes the bytes
   * @return 64 lower-case hexadecimal digits
   */
  static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      // Every Java platform must provide SHA-256 (MessageDigest's class documentation).
      throw new IllegalStateException("this Java has no SHA-256", e);
    }
  }
}
