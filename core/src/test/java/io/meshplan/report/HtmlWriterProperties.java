package io.meshplan.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.meshplan.testing.Cases;
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
    // XML 1.0 cannot carry control characters or lone surrogates; the writer turns controls into
    // spaces, and the generator's surrogates are left out here.
    String clean = text.codePoints().filter(c -> c >= 0x20 || c == '\n' || c == '\t')
        .filter(c -> c < 0xD800 || c > 0xDFFF).filter(c -> c != 0xFFFE && c != 0xFFFF)
        .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append)
        .toString();
    HtmlWriter w = new HtmlWriter();
    w.open("p", "data-x", clean).text(clean).close("p");
    Document d = ReportHtmlTest.parse(w.toString());
    Element p = d.getDocumentElement();
    assertThat(p.getTextContent()).isEqualTo(clean.replace("\r", "\n"));
    // Attribute values normalise whitespace characters to spaces.
    assertThat(p.getAttribute("data-x")).isEqualTo(clean.replaceAll("[\\t\\n\\r]", " "));
  }
}
