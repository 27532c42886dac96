package io.meshplan.deploy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A directory of stand-ins for the launchers a generated script calls (torchrun, srun, scontrol,
 * dask, runai): each records its argv and environment, NUL-separated,
 * so a test can check exactly what the script would have launched.
 */
final class FakeTools {
  final Path dir;

  FakeTools() {
    try {
      dir = Files.createTempDirectory("meshplan-fake-");
      Runtime.getRuntime().addShutdownHook(new Thread(this::delete));
      Files.createDirectories(dir.resolve("bin"));
      Files.createDirectories(dir.resolve("log"));
      String record = "#!/usr/bin/env bash\n"
          + "printf '%s\\0' \"${0##*/}\" \"$@\" > \"$MESHPLAN_FAKE_LOG/argv\"\n"
          + "env -0 > \"$MESHPLAN_FAKE_LOG/env\"\n";
      for (String tool : List.of("torchrun", "dask", "runai",
          "pretrain_gpt.py")) {
        tool(tool, record);
      }
      // srun runs its command once here: skip its options, then run the rest.
      tool("srun", "#!/usr/bin/env bash\nwhile [[ \"$1\" == -* ]]; do shift; done\n"
          + "exec \"$@\"\n");
      tool("scontrol", "#!/usr/bin/env bash\nprintf 'gpu-node-001\\ngpu-node-002\\n'\n");
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  private void tool(String name, String text) throws IOException {
    Path p = dir.resolve("bin").resolve(name);
    Files.writeString(p, text);
    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  /** Deletes the stand-ins and their logs (at JVM exit). */
  private void delete() {
    try (var paths = Files.walk(dir)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /** The environment to run a script with: the fakes first on PATH, plus the given variables. */
  Map<String, String> env(Map<String, String> more) {
    Map<String, String> m = new TreeMap<>(more);
    m.put("PATH", dir.resolve("bin") + ":" + System.getenv("PATH"));
    m.put("MESHPLAN_FAKE_LOG", dir.resolve("log").toString());
    return m;
  }

  /** The argv the last fake recorded, its own name first. */
  List<String> argv() {
    return split(dir.resolve("log/argv"));
  }

  /** The environment the last fake saw. */
  Map<String, String> environment() {
    Map<String, String> m = new TreeMap<>();
    for (String kv : split(dir.resolve("log/env"))) {
      int eq = kv.indexOf('=');
      if (eq > 0) {
        m.put(kv.substring(0, eq), kv.substring(eq + 1));
      }
    }
    return m;
  }

  private static List<String> split(Path file) {
    try {
      String s = Files.readString(file, StandardCharsets.UTF_8);
      List<String> out = new ArrayList<>(Arrays.asList(s.split("\0", -1)));
      out.remove(out.size() - 1);
      return out;
    } catch (IOException e) {
      throw new AssertionError("the fake launcher was not called", e);
    }
  }
}
