package io.meshplan.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.testing.Cases;
import io.meshplan.util.TerminalText;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;

class HtmlWriterProperties {
  /** Whatever the text, escaped it parses back to itself in a body and in an attribute. */
  @Test
  void escapedTextRoundTrips() {
    List<String> edges = List.of("", " ", "a", "\0", "\t", "\n", "\r", "\r\n", "\u007F", "\u00A0",
        "\uFFFF", "\uFFFE", "\uD800", "\uDFFF", "\uD83D\uDE00", "<&>\"'", "]]>", "&amp;",
        "x".repeat(255), "\uD83D\uDE00".repeat(127) + "<");
    Cases.check(41, 300, edges, gen -> gen.anyString(255), text -> {
      try {
        roundTrip(text);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
  }

  private static void roundTrip(String text) throws Exception {
    // Controls, format characters and lone surrogates come back as their escapes, as a terminal
    // shows them (TerminalText); U+FFFE and U+FFFF, which XML 1.0 cannot carry, are left out.
    String clean = text.codePoints().filter(c -> c != 0xFFFE && c != 0xFFFF)
        .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append)
        .toString();
    HtmlWriter w = new HtmlWriter();
    w.open("p", "data-x", clean).text(clean).close("p");
    Document d = ReportHtmlTest.parse(w.toString());
    Element p = d.getDocumentElement();
    String shown = TerminalText.escapeKeepingLines(clean);
    assertThat(p.getTextContent()).isEqualTo(shown);
    // Attribute values normalise whitespace characters to spaces.
    assertThat(p.getAttribute("data-x")).isEqualTo(shown.replaceAll("[\\t\\n]", " "));
  }
}
