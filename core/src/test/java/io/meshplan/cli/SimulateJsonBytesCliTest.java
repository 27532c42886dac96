package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigInteger;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Byte figures in simulate's JSON are whole numbers past 2^63 - 1 too: an OLMoE config grown to
 * 9e18 parameters (inside meshplan's limits) needs 1.05e19 bytes a GPU, which the JSON wrote as
 * 9223372036854775807, against the sum of its own parts and the text.
 */
class SimulateJsonBytesCliTest {
  @TempDir Path dir;

  @Test
  void bytesPastALongAreWrittenWhole() throws Exception {
    ObjectMapper json = new ObjectMapper();
    ObjectNode cfg = (ObjectNode) json.readTree(
        Path.of("core/src/test/resources/hf/olmoe-1b-7b-0924.json").toFile());
    cfg.put("hidden_size", 65536).put("intermediate_size", 4194304)
        .put("num_hidden_layers", 2700).put("num_experts", 4096)
        .put("num_experts_per_tok", 4096).put("num_attention_heads", 512)
        .put("num_key_value_heads", 512);
    Path f = dir.resolve("big.json");
    json.writeValue(f.toFile(), cfg);
    CliRun r = CliRun.of("simulate", "--model", f.toString(), "--cluster", "2x8:h100",
        "--tp", "1", "--pp", "1", "--dp", "16", "--global-batch", "16", "--micro-batch", "1",
        "--ep", "16", "--seq", "1024", "--json");
    JsonNode out = json.readTree(r.out());
    BigInteger parts = BigInteger.ZERO;
    for (JsonNode v : out.get("memory")) {
      parts = parts.add(v.bigIntegerValue());
    }
    BigInteger peak = out.get("peakMemoryBytesPerGpu").bigIntegerValue();
    assertThat(peak).isGreaterThan(BigInteger.valueOf(Long.MAX_VALUE));
    // The parts are rounded one by one: their sum is the peak within a few bytes.
    assertThat(peak.subtract(parts).abs()).isLessThan(BigInteger.valueOf(1 << 12));
    assertThat(out.at("/fits/needBytes").bigIntegerValue()).isEqualTo(peak);
  }
}
