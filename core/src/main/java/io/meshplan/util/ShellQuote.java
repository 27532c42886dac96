package io.meshplan.util;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Quotes text for POSIX shells (bash, sh) so that the shell reads it back as exactly one word with
 * the same bytes: no expansion of {@code $}, backticks, globs or history, and newlines kept. Words
 * made only of characters that no shell treats specially are left bare, so generated scripts stay
 * readable (a word with {@code =} is quoted: in command position it could be an assignment);
 * everything else goes in single quotes, with each embedded single quote written as
 * {@code '\''}.
 */
public final class ShellQuote {
  private static final Pattern BARE = Pattern.compile("[A-Za-z0-9_@%+:,./-]+");

  private ShellQuote() {}

  /**
   * Quotes one word.
   *
   * @param word any text, even empty or with newlines
   * @return shell text that expands to exactly {@code word}
   * @throws IllegalArgumentException if the word holds a NUL character, which no shell word can
   */
  public static String quote(String word) {
    Require.nonNull(word, "word");
    Require.that(word.indexOf('\0') < 0, "a shell word cannot hold a NUL character");
    if (BARE.matcher(word).matches()) {
      return word;
    }
    return "'" + word.replace("'", "'\\''") + "'";
  }

  /**
   * Quotes each word and joins them with spaces.
   *
   * @param words the words
   * @return shell text that expands to exactly these words
   */
  public static String join(List<String> words) {
    StringBuilder sb = new StringBuilder();
    for (String w : words) {
      if (sb.length() > 0) {
        sb.append(' ');
      }
      sb.append(quote(w));
    }
    return sb.toString();
  }

  /**
   * Makes text safe to put after a comment marker ({@code #}) in a script, a YAML or a TOML file:
   * control and format characters (newlines among them, which could end the comment and start a
   * command, and escape sequences a terminal would obey when the file is shown) are written as
   * their escapes ({@link TerminalText#escape}).
   *
   * @param text any text
   * @return the text on one line
   */
  public static String commentText(String text) {
    return TerminalText.escape(text);
  }
}
