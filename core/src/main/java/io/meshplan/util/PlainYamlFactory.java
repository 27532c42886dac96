package io.meshplan.util;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.IOContext;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactoryBuilder;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import java.io.CharArrayReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.Reader;
import org.yaml.snakeyaml.events.AliasEvent;
import org.yaml.snakeyaml.events.CollectionStartEvent;
import org.yaml.snakeyaml.events.Event;
import org.yaml.snakeyaml.events.NodeEvent;
import org.yaml.snakeyaml.events.ScalarEvent;

/**
 * A YAML factory whose parsers read plain YAML only: a mapping, sequence or scalar with an
 * anchor ({@code &name}), an alias ({@code *name}) or an explicit tag ({@code !!java.net.URL},
 * {@code !<tag:...>}, {@code !local}) is refused at its line and column.
 *
 * <p>Unquoted numbers in another base and words that YAML 1.1 reads as booleans ({@code 010},
 * {@code on}) are refused too: they would read as another value than the file shows.
 *
 * <p>No file meshplan reads (cluster, profile, sweep grid) needs any of them, and each is a way
 * in for hostile input: aliases build "billion laughs" documents (which a loader that expands
 * them grows exponentially), and Jackson reports an alias as its anchor's name, so {@code
 * gpus: *x} would otherwise read as the text {@code x}; tags name types or constructors that a
 * binding loader instantiates (SnakeYAML's global Java tags), and Jackson drops them silently,
 * reading something else than the file says.
 */
final class PlainYamlFactory extends YAMLFactory {
  private static final long serialVersionUID = 1L;

  /**
   * A factory from a configured builder.
   *
   * @param b the builder with the loader options and read constraints
   */
  PlainYamlFactory(YAMLFactoryBuilder b) {
    super(b);
  }

  @Override
  protected YAMLParser _createParser(InputStream in, IOContext ctxt) throws IOException {
    return new PlainParser(ctxt, this, _createReader(in, null, ctxt));
  }

  @Override
  protected YAMLParser _createParser(Reader r, IOContext ctxt) throws IOException {
    return new PlainParser(ctxt, this, r);
  }

  @Override
  protected YAMLParser _createParser(char[] data, int offset, int len, IOContext ctxt,
      boolean recyclable) throws IOException {
    return new PlainParser(ctxt, this, new CharArrayReader(data, offset, len));
  }

  @Override
  protected YAMLParser _createParser(byte[] data, int offset, int len, IOContext ctxt)
      throws IOException {
    return new PlainParser(ctxt, this, _createReader(data, offset, len, null, ctxt));
  }

  /**
   * Unquoted scalars that YAML 1.1, which Jackson's parser follows, reads as integers in another
   * base: {@code 0x8} (8), {@code 0b11} (3), {@code 010} (8, octal), {@code 0o17}, and base 60
   * ({@code 1:30} is 90). A grid's {@code clusters: [0x8]} read so is the number 8, and a value
   * like {@code 010} silently becomes another number; meshplan refuses them. Plain decimals,
   * {@code 0} and fractions such as {@code 0.5} do not match.
   */
  private static final java.util.regex.Pattern OTHER_BASE = java.util.regex.Pattern.compile(
      "[-+]?(0x[0-9a-fA-F_]+|0b[01_]+|0o?[0-7_]+|[1-9][0-9_]*(:[0-5]?[0-9])+)");

  /**
   * Unquoted scalars that YAML 1.1, which Jackson's parser follows, reads as booleans although
   * they are words: {@code yes} and {@code on} are true, {@code no} and {@code off} false, in
   * each of their three spellings (the YAML 1.1 boolean type, yaml.org/type/bool.html; Jackson's
   * {@code YAMLParser} reads them so, and reads {@code y} and {@code n} as text). A grid's
   * {@code attention: [on]} read so is {@code true}, and a refusal would name a value the file
   * does not hold; meshplan refuses them. {@code true} and {@code false} do not match.
   */
  private static final java.util.regex.Pattern WORD_BOOLEAN = java.util.regex.Pattern.compile(
      "yes|Yes|YES|no|No|NO|on|On|ON|off|Off|OFF");

  /**
   * The parser that refuses anchors, aliases, tags, numbers in other bases and words read as
   * booleans as it meets them.
   */
  private static final class PlainParser extends YAMLParser {
    PlainParser(IOContext ctxt, PlainYamlFactory f, Reader r) {
      super(ctxt, f._parserFeatures, f._yamlParserFeatures, f._loaderOptions, f._objectCodec, r);
    }

    @Override
    public JsonToken nextToken() throws IOException {
      JsonToken t = super.nextToken();
      // Every token comes from one SnakeYAML event (a scalar, a collection's start or an
      // alias); its anchor and tag are read there, where Jackson keeps them all.
      Event e = _lastEvent;
      if (t == null || e == null) {
        return t;
      }
      if (e instanceof AliasEvent a) {
        throw refusal("YAML alias '*" + a.getAnchor() + "' is not accepted", "; write the "
            + "value out");
      }
      if (e instanceof NodeEvent n && n.getAnchor() != null) {
        throw refusal("YAML anchor '&" + n.getAnchor() + "' is not accepted", "");
      }
      String tag = e instanceof ScalarEvent s ? s.getTag()
          : e instanceof CollectionStartEvent c ? c.getTag() : null;
      if (tag != null) {
        throw refusal("YAML tag '" + tag + "' is not accepted", "");
      }
      if (e instanceof ScalarEvent s && s.isPlain()) {
        if (OTHER_BASE.matcher(s.getValue()).matches()) {
          throw new JsonParseException(this, "'" + TerminalText.escape(s.getValue()) + "' is "
              + "read by YAML as a number in another base (hexadecimal, octal, binary or base "
              + "60), not as written; quote it, or write the number in decimal");
        }
        if ((t == JsonToken.VALUE_NUMBER_INT || t == JsonToken.VALUE_NUMBER_FLOAT)
            && (s.getValue().contains("_") || s.getValue().startsWith("+"))) {
          // YAML 1.1 drops a number's underscores and its plus sign: 1_024 is 1024 and +3_2 is
          // 32, a number the file does not show.
          throw new JsonParseException(this, "'" + TerminalText.escape(s.getValue()) + "' is "
              + "read by YAML as a number without its " + (s.getValue().contains("_")
                  ? "underscores" : "plus sign") + ", not as written; write the number in plain "
              + "digits");
        }
        if (WORD_BOOLEAN.matcher(s.getValue()).matches()) {
          throw new JsonParseException(this, "'" + s.getValue() + "' is read by YAML as the "
              + "boolean " + (t == JsonToken.VALUE_TRUE) + ", not as written; quote it, or "
              + "write true or false");
        }
      }
      return t;
    }

    private JsonParseException refusal(String what, String fix) {
      return new JsonParseException(this, what + ": meshplan reads plain YAML, without anchors, "
          + "aliases or tags" + fix);
    }
  }
}
