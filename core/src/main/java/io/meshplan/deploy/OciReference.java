package io.meshplan.deploy;

import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks a container image reference against the grammar that container runtimes parse it
 * with, restated from distribution/reference 0965666a ({@code reference.go} grammar and {@code
 * Parse}, {@code regexp.go}, {@code normalize.go} {@code ParseNormalizedNamed}, which containerd's
 * CRI uses for a pod's {@code image}) and opencontainers/go-digest ({@code algorithm.go}: the
 * sha256, sha384 and sha512 digests in lower-case hex of 64, 96 and 128 digits):
 *
 * <pre>
 * reference   := name [ ":" tag ] [ "@" digest ]
 * name        := [domain "/"] path-component ["/" path-component]*   (path at most 255)
 * domain      := (domain-component ["." domain-component]* | "[" IPv6 "]") [":" port]
 * path-component := [a-z0-9]+ ( ([._] | "__" | "-"+) [a-z0-9]+ )*
 * tag         := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
 * </pre>
 *
 * The path is lower-case: a reference that parses only once lower-cased is refused with that
 * reason, as distribution/reference does; so is a bare 64-digit hexadecimal identifier.
 */
final class OciReference {
  private static final String ALNUM = "[a-z0-9]+";
  private static final String SEPARATOR = "(?:[._]|__|[-]+)";
  private static final String PATH_COMPONENT = ALNUM + "(?:" + SEPARATOR + ALNUM + ")*";
  private static final String PATH = PATH_COMPONENT + "(?:/" + PATH_COMPONENT + ")*";
  private static final String DOMAIN_COMPONENT = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
  private static final String DOMAIN = "(?:" + DOMAIN_COMPONENT + "(?:\\." + DOMAIN_COMPONENT
      + ")*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?";
  private static final String TAG = "[\\w][\\w.-]{0,127}";
  private static final String DIGEST = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:"
      + "[0-9a-fA-F]{32,}";
  private static final Pattern REFERENCE = Pattern.compile("((?:(" + DOMAIN + ")/)?(" + PATH
      + "))(?::(" + TAG + "))?(?:@(" + DIGEST + "))?");
  private static final Pattern IDENTIFIER = Pattern.compile("[a-f0-9]{64}");
  private static final Map<String, Integer> DIGEST_HEX = Map.of("sha256", 64, "sha384", 96,
      "sha512", 128);
  private static final int PATH_MAX = 255;

  private OciReference() {}

  /**
   * Why a text is not an image reference.
   *
   * @param image the text
   * @return the reason, or empty when it is a reference
   */
  static Optional<String> problem(String image) {
    if (image == null || image.isEmpty()) {
      return Optional.of("it is empty");
    }
    if (IDENTIFIER.matcher(image).matches()) {
      return Optional.of("a 64-digit hexadecimal identifier is not a repository name");
    }
    Matcher m = REFERENCE.matcher(image);
    if (!m.matches()) {
      String lower = image.toLowerCase(Locale.ROOT);
      if (!lower.equals(image) && REFERENCE.matcher(lower).matches()) {
        return Optional.of("the repository path must be lower-case");
      }
      return Optional.of("it does not follow the reference grammar"
          + " [registry[:port]/]path[:tag][@digest]");
    }
    String domain = m.group(2);
    if (domain != null && domain.matches(".*:[0-9]+")) {
      String port = domain.substring(domain.lastIndexOf(':') + 1);
      int p = port.length() > 5 ? 0 : io.meshplan.util.AsciiDigits.parseInt(port);
      if (p < 1 || p > 65535) {
        return Optional.of("the registry's port " + port + " is not 1 to 65535");
      }
    }
    if (m.group(3).length() > PATH_MAX) {
      return Optional.of("the repository path is longer than " + PATH_MAX + " characters");
    }
    if (m.group(5) != null) {
      String[] d = m.group(5).split(":", 2);
      Integer hex = DIGEST_HEX.get(d[0]);
      if (hex == null || d[1].length() != hex || !d[1].equals(d[1].toLowerCase(Locale.ROOT))) {
        return Optional.of("the digest is not sha256, sha384 or sha512 with 64, 96 or 128"
            + " lower-case hexadecimal digits");
      }
    }
    return Optional.empty();
  }
  /**
   * The repository a valid reference names, with its registry written out as a container runtime
   * resolves it ({@code normalize.go}, {@code splitDockerDomain}): the first part is a registry
   * only when it holds a '.' or ':', is {@code localhost}, or has an upper-case letter; else the
   * registry is Docker Hub, {@code docker.io} (also for its old name {@code index.docker.io}),
   * where a one-part path is an official image under {@code library/}. The registry is
   * lower-cased, since host names are compared without case.
   *
   * @param image a reference {@link #problem} accepts
   * @return e.g. {@code docker.io/rocm/pytorch} for {@code rocm/pytorch:latest}
   */
  static String normalizedName(String image) {
    Matcher m = REFERENCE.matcher(image);
    if (!m.matches()) {
      throw new IllegalArgumentException("not an image reference: " + image);
    }
    String name = m.group(1);
    int slash = name.indexOf('/');
    String first = slash < 0 ? "" : name.substring(0, slash);
    boolean registry = slash >= 0 && (first.contains(".") || first.contains(":")
        || first.equals("localhost") || !first.toLowerCase(Locale.ROOT).equals(first));
    String domain = registry ? first.toLowerCase(Locale.ROOT) : "docker.io";
    String path = registry ? name.substring(slash + 1) : name;
    // One registry by any of its names: HTTPS's port 443 written out, and Docker Hub's API
    // host, registry-1.docker.io, which a runtime pulling docker.io talks to.
    if (domain.endsWith(":443")) {
      domain = domain.substring(0, domain.length() - 4);
    }
    if (domain.equals("index.docker.io") || domain.equals("registry-1.docker.io")) {
      domain = "docker.io";
    }
    if (domain.equals("docker.io") && path.indexOf('/') < 0) {
      path = "library/" + path;
    }
    return domain + "/" + path;
  }
}
