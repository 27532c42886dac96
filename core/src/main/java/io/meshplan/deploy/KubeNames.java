package io.meshplan.deploy;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The grammars Kubernetes checks the fields of an object against, restated from apimachinery
 * (kubernetes/apimachinery eed236ce: {@code pkg/util/validation/validation.go} for DNS labels and
 * subdomains, {@code pkg/api/validate/content/kube.go} for qualified names and label values,
 * {@code pkg/api/resource/quantity.go} for quantities) and from the core API's extended resource
 * rule (kubernetes/kubernetes 78fc8e44, {@code pkg/apis/core/helper/helpers.go}, {@code
 * IsExtendedResourceName}). The API server refuses an object with a field outside them, so
 * {@code deploy} refuses the value before writing it.
 */
final class KubeNames {
  private static final Pattern DNS1123_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  private static final Pattern DNS1035_LABEL = Pattern.compile("[a-z]([-a-z0-9]*[a-z0-9])?");
  private static final Pattern DNS1123_SUBDOMAIN = Pattern.compile(
      "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern QUALIFIED_NAME_PART =
      Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
  /** {@code <number><suffix>} without a sign; the suffix as quantity.go lists them. */
  private static final Pattern QUANTITY = Pattern.compile(
      "([0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|[eE][+-]?[0-9]+)?");
  /** The largest quantity Kubernetes keeps without capping it: 2^63 - 1. */
  private static final BigInteger QUANTITY_MAX = BigInteger.valueOf(Long.MAX_VALUE);
  /** Kubernetes' own resource namespace, which extended resources may not use. */
  private static final String NATIVE_DOMAIN = "kubernetes.io/";
  /** The prefix a quota puts before a resource name, which an extended resource may not have. */
  private static final String REQUESTS_PREFIX = "requests.";

  private KubeNames() {}

  /** A DNS-1123 label: at most 63 of {@code [a-z0-9-]}, alphanumeric at both ends. */
  static boolean dns1123Label(String s) {
    return s != null && s.length() <= 63 && DNS1123_LABEL.matcher(s).matches();
  }

  /** A DNS-1035 label: a DNS-1123 label that starts with a letter. */
  static boolean dns1035Label(String s) {
    return s != null && s.length() <= 63 && DNS1035_LABEL.matcher(s).matches();
  }

  /** A DNS-1123 subdomain: dot-separated DNS-1123 labels, at most 253 characters. */
  static boolean dns1123Subdomain(String s) {
    return s != null && s.length() <= 253 && DNS1123_SUBDOMAIN.matcher(s).matches();
  }

  /** A qualified name: {@code [DNS-1123 subdomain/]name}, the name at most 63 characters. */
  static boolean qualifiedName(String s) {
    if (s == null) {
      return false;
    }
    int slash = s.indexOf('/');
    String name = slash < 0 ? s : s.substring(slash + 1);
    boolean prefixOk = slash < 0 || dns1123Subdomain(s.substring(0, slash));
    return prefixOk && name.length() <= 63 && QUALIFIED_NAME_PART.matcher(name).matches();
  }

  /**
   * An extended resource name ({@code IsExtendedResourceName}): it has a domain, not Kubernetes'
   * own ({@code kubernetes.io/}), does not start with {@code requests.}, and {@code
   * requests.NAME} is a qualified name.
   */
  static boolean extendedResource(String s) {
    return s != null && s.contains("/") && !s.contains(NATIVE_DOMAIN)
        && !s.startsWith(REQUESTS_PREFIX) && qualifiedName(REQUESTS_PREFIX + s);
  }

  /**
   * A quantity of bytes: Kubernetes' quantity grammar without a sign or the milli suffix, a whole
   * number of bytes from 1 to 2^63 - 1.
   *
   * @param s the text, e.g. {@code 64Gi}, {@code 500M}, {@code 1e9}
   * @return the bytes, or empty when the text is not such a quantity
   */
  static Optional<BigInteger> bytes(String s) {
    if (s == null || s.length() > 64) {
      return Optional.empty();
    }
    Matcher m = QUANTITY.matcher(s);
    if (!m.matches()) {
      return Optional.empty();
    }
    BigDecimal v = new BigDecimal(m.group(1).endsWith(".") ? m.group(1) + "0" : m.group(1));
    String suffix = m.group(2) == null ? "" : m.group(2);
    if (suffix.startsWith("e") || suffix.startsWith("E")) {
      int exp;
      try {
        exp = io.meshplan.util.AsciiDigits.parseInt(suffix.substring(1));
      } catch (NumberFormatException e) {
        return Optional.empty();
      }
      if (Math.abs(exp) > 64) {
        return Optional.empty();
      }
      v = v.scaleByPowerOfTen(exp);
    } else if (!suffix.isEmpty()) {
      v = v.multiply(new BigDecimal(multiplier(suffix)));
    }
    BigInteger whole;
    try {
      whole = v.stripTrailingZeros().toBigIntegerExact();
    } catch (ArithmeticException e) {
      return Optional.empty();
    }
    return whole.signum() > 0 && whole.compareTo(QUANTITY_MAX) <= 0 ? Optional.of(whole)
        : Optional.empty();
  }

  private static BigInteger multiplier(String suffix) {
    String binary = "KMGTPE";
    int k = binary.indexOf(suffix.charAt(0)) + 1;
    if (suffix.endsWith("i")) {
      return BigInteger.TWO.pow(10 * k);
    }
    return BigInteger.TEN.pow(3 * ("kMGTPE".indexOf(suffix.charAt(0)) + 1));
  }
}
