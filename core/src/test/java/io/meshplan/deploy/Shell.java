package io.meshplan.deploy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Runs bash and shellcheck on generated scripts; both must be installed (CI installs them). */
final class Shell {
  /**
   * A finished process.
   *
   * @param code exit code
   * @param out standard output
   * @param err standard error
   */
  record Result(int code, String out, String err) {}

  private Shell() {}

  static Result run(List<String> argv, Map<String, String> env, Path dir) {
    try {
      ProcessBuilder pb = new ProcessBuilder(argv);
      if (dir != null) {
        pb.directory(dir.toFile());
      }
      pb.environment().putAll(env);
      Path outFile = Files.createTempFile("meshplan-sh-", ".out");
      Path errFile = Files.createTempFile("meshplan-sh-", ".err");
      try {
        pb.redirectOutput(outFile.toFile()).redirectError(errFile.toFile());
        pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        int code = pb.start().waitFor();
        return new Result(code, Files.readString(outFile, StandardCharsets.UTF_8),
            Files.readString(errFile, StandardCharsets.UTF_8));
      } finally {
        Files.deleteIfExists(outFile);
        Files.deleteIfExists(errFile);
      }
    } catch (IOException e) {
      throw new AssertionError("cannot run " + argv.get(0) + " (is it installed?)", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** Writes a script to a temporary file and returns its path. */
  static Path temp(String text) {
    try {
      Path p = Files.createTempFile("meshplan-script-", ".sh");
      p.toFile().deleteOnExit();
      Files.writeString(p, text, StandardCharsets.UTF_8);
      return p;
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /** bash -n: the script parses. */
  static Result syntax(String script) {
    Path p = temp(script);
    try {
      return run(List.of("bash", "-n", p.toString()), Map.of(), null);
    } finally {
      delete(p);
    }
  }

  /** shellcheck with every optional severity (style included). */
  static Result shellcheck(String script) {
    Path p = temp(script);
    try {
      return run(List.of("shellcheck", "--shell=bash", "--severity=style", p.toString()), Map.of(),
          null);
    } finally {
      delete(p);
    }
  }

  /** Runs bash on a script file with arguments. */
  static Result bash(Path script, List<String> args, Map<String, String> env, Path dir) {
    List<String> argv = new ArrayList<>(List.of("bash", script.toString()));
    argv.addAll(args);
    return run(argv, env, dir);
  }

  static void delete(Path p) {
    try {
      Files.deleteIfExists(p);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }
}
