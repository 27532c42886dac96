package io.meshplan.calibrate;

import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;

/** Locates the fixture logs under {@code src/test/resources/calibrate/}. */
final class Fixtures {
  private Fixtures() {}

  static Path path(String name) {
    URL url = Fixtures.class.getResource("/calibrate/" + name);
    if (url == null) {
      throw new IllegalArgumentException("no fixture " + name);
    }
    try {
      return Path.of(url.toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  static ParseResult read(String name, int gpusPerNode) {
    return new BenchmarkLogReader(gpusPerNode).read(path(name));
  }
}
