package io.meshplan.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Opens a report in a real headless Chromium with networking disabled (a proxy on a closed port
 * and a resolver that maps every host to nothing), takes a screenshot and dumps the DOM in the
 * same start. Fails, never skips, when Chromium is missing: {@code .ci/run} installs it.
 */
class ReportBrowserTest {
  static Optional<Path> chromium() {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      for (String name : List.of("chromium", "chromium-browser")) {
        Path p = Path.of(dir, name);
        if (Files.isExecutable(p)) {
          return Optional.of(p);
        }
      }
    }
    return Optional.empty();
  }

  @Test
  void rendersInAHeadlessBrowser(@TempDir Path dir) throws Exception {
    Optional<Path> browser = chromium();
    assertThat(browser).as("chromium on PATH (apt-get install -y chromium; .ci/run does it)")
        .isPresent();
    Path html = dir.resolve("report.html");
    Files.writeString(html, ReportHtml.write(ReportFixtures.input("gpt-1.7b", 8, false)));
    Path png = dir.resolve("shot.png");
    Path dom = dir.resolve("dom.html");
    Path profile = Files.createDirectory(dir.resolve("profile"));
    ProcessBuilder pb = new ProcessBuilder(browser.get().toString(), "--headless",
        "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--user-data-dir=" + profile, "--proxy-server=127.0.0.1:9",
        "--host-resolver-rules=MAP * ~NOTFOUND", "--screenshot=" + png, "--dump-dom",
        "--window-size=1280,2400", html.toUri().toString());
    pb.redirectOutput(dom.toFile());
    pb.redirectError(dir.resolve("stderr.txt").toFile());
    Process p = pb.start();
    boolean done = p.waitFor(120, TimeUnit.SECONDS);
    if (!done) {
      p.destroyForcibly();
    }
    assertThat(done).as("chromium finished within 120 s").isTrue();
    assertThat(p.exitValue()).as(Files.readString(dir.resolve("stderr.txt"))).isZero();

    String rendered = Files.readString(dom, StandardCharsets.UTF_8);
    for (String id : List.of("headline", "cluster", "timeline", "memory", "breakdown",
        "sharding")) {
      assertThat(rendered).as(id).contains("id=\"" + id + "\"");
    }

    BufferedImage img = ImageIO.read(png.toFile());
    assertThat(img.getWidth()).isEqualTo(1280);
    long nonWhite = 0;
    Set<Integer> colours = new HashSet<>();
    for (int y = 0; y < img.getHeight(); y++) {
      for (int x = 0; x < img.getWidth(); x++) {
        int rgb = img.getRGB(x, y) & 0xffffff;
        if (rgb != 0xffffff) {
          nonWhite++;
        }
        colours.add(rgb);
      }
    }
    // A blank page is all white; the charts fill well over 2% of the 1280 x 2400 pixels.
    assertThat(nonWhite).isGreaterThan(img.getWidth() * (long) img.getHeight() / 50);
    // The four stages' colours are painted (GPU squares, legend swatches).
    for (int s = 0; s < ReportFixtures.STAGES; s++) {
      int c = Integer.parseInt(Palette.stage(s).substring(1), 16);
      assertThat(colours).as("stage %d colour %s", s, Palette.stage(s)).contains(c);
    }
  }
}
