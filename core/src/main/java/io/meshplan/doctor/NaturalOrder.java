package io.meshplan.doctor;

import io.meshplan.util.AsciiDigits;
import java.util.Comparator;

/**
 * Orders names so that runs of digits compare as numbers: {@code mlx5_2} before {@code mlx5_10}. Ties
 * (such as {@code eth01} and {@code eth1}) fall back to plain string order, so the order is total.
 */
final class NaturalOrder implements Comparator<String> {
  static final NaturalOrder INSTANCE = new NaturalOrder();

  private NaturalOrder() {}

  @Override
  public int compare(String a, String b) {
    int i = 0;
    int j = 0;
    while (i < a.length() && j < b.length()) {
      char ca = a.charAt(i);
      char cb = b.charAt(j);
      if (AsciiDigits.isDigit(ca) && AsciiDigits.isDigit(cb)) {
        int ei = digitsEnd(a, i);
        int ej = digitsEnd(b, j);
        String na = stripZeros(a.substring(i, ei));
        String nb = stripZeros(b.substring(j, ej));
        int c = na.length() != nb.length() ? Integer.compare(na.length(), nb.length()) : na.compareTo(nb);
        if (c != 0) {
          return c;
        }
        i = ei;
        j = ej;
      } else {
        if (ca != cb) {
          return Character.compare(ca, cb);
        }
        i++;
        j++;
      }
    }
    int c = Integer.compare(a.length() - i, b.length() - j);
    return c != 0 ? c : a.compareTo(b);
  }

  private static int digitsEnd(String s, int from) {
    int k = from;
    while (k < s.length() && AsciiDigits.isDigit(s.charAt(k))) {
      k++;
    }
    return k;
  }

  private static String stripZeros(String digits) {
    int k = 0;
    while (k < digits.length() - 1 && digits.charAt(k) == '0') {
      k++;
    }
    return digits.substring(k);
  }
}
