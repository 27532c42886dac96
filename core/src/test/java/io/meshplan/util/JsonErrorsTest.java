package io.meshplan.util;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The readers' refusals in the user's terms: none of the JSON library's feature names. */
class JsonErrorsTest {
  private static String refusal(byte[] bytes) {
    try {
      new ObjectMapper().readTree(bytes);
    } catch (IOException e) {
      return JsonErrors.describe(e);
    }
    throw new AssertionError("read");
  }

  @Test
  void theLibrarysAdviceAndCodesAreLeftOut() {
    // Were: "... maybe a (non-standard) comment? (not recognized as one since Feature
    // 'ALLOW_COMMENTS' not enabled for parser)", "... enable `JsonReadFeature.ALLOW_NON_NUMERIC_
    // NUMBERS` to allow", and "Unexpected character ('\uFFFD' (code 65533 / 0xfffd)) ...".
    assertThat(refusal("// c\n{}".getBytes(StandardCharsets.UTF_8)))
        .isEqualTo("line 1, column 1: Unexpected character ('/'): JSON has no comments");
    assertThat(refusal("{\"a\":NaN}".getBytes(StandardCharsets.UTF_8)))
        .isEqualTo("line 1, column 9: Non-standard token 'NaN'");
    // A UTF-16 file decoded as UTF-8 text begins with the replacement character.
    String utf16;
    try {
      new ObjectMapper().readTree("\uFFFD\uFFFD{}");
      throw new AssertionError("read");
    } catch (IOException e) {
      utf16 = JsonErrors.describe(e);
    }
    assertThat(utf16).endsWith("bytes that are not UTF-8 text (is the file UTF-16, or binary?)");
    for (String s : new String[] {refusal("// c\n{}".getBytes(StandardCharsets.UTF_8)),
        refusal("{\"a\":NaN}".getBytes(StandardCharsets.UTF_8))}) {
      assertThat(s).doesNotContain("Feature").doesNotContain("enable").doesNotContain("code ");
    }
  }
}
