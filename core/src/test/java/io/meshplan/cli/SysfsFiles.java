package io.meshplan.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Writes the attribute files of a stand-in sysfs tree for the doctor's tests. */
final class SysfsFiles {
  private SysfsFiles() {}

  /**
   * Writes one attribute as the kernel serves it: the text and a newline.
   *
   * @param sys the tree's root (the stand-in for {@code /sys})
   * @param file the attribute's path below it, e.g. {@code class/net/eth0/type}
   * @param text the value
   */
  static void write(Path sys, String file, String text) throws IOException {
    Path p = sys.resolve(file);
    Files.createDirectories(p.getParent());
    Files.writeString(p, text + "\n");
  }
}
