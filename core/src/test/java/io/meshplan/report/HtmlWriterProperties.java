package io.meshplan.report;

import static org.assertj.core.api.Assertions.assertThat;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.w3c.dom.Document;
import org.w3c.dom.Element;

class HtmlWriterProperties {
  /** Whatever the text, escaped it parses back to itself in a body and in an attribute. */
  @Property(tries = 300)
  void escapedTextRoundTrips(@ForAll String text) throws Exception {
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
