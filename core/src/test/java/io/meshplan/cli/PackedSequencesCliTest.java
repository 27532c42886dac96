package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.withinPercentage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --mean-doc-len} and {@code --packed-seqs} as a user meets them: a packed 8K sequence of
 * eight 1K documents trains as fast as eight 1K sequences, the plan file keeps the documents,
 * Megatron-LM's export masks by document, frameworks that cannot say so name it, and bad input is
 * refused in one line with nothing written.
 */
class PackedSequencesCliTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> BASE = List.of("simulate", "--model", "llama3-8b",
      "--cluster", "1x8:h100-80gb", "--tp", "1", "--pp", "1", "--dp", "8", "--recompute",
      "full", "--distributed-optimizer", "--json");

  @TempDir Path dir;

  private static JsonNode simulate(String... more) throws Exception {
    List<String> a = new ArrayList<>(BASE);
    a.addAll(List.of(more));
    CliRun r = CliRun.of(a.toArray(String[]::new));
    assertThat(r.code()).as(r.err()).isZero();
    return JSON.readTree(r.out());
  }

  /**
   * Same tokens per iteration (64 x 8,192 = 512 x 1,024), same GEMMs per token; the attention of
   * the packed sequences computes 8 x 1024^2 / 2 pairs per sequence, as eight 1K sequences do.
   */
  @Test
  void packedDocumentsTrainAsTheirOwnSequences() throws Exception {
    JsonNode packed = simulate("--seq", "8192", "--micro-batch", "1", "--global-batch", "64",
        "--mean-doc-len", "1024");
    JsonNode apart = simulate("--seq", "1024", "--micro-batch", "8", "--global-batch", "512");
    JsonNode whole = simulate("--seq", "8192", "--micro-batch", "1", "--global-batch", "64");
    double p = packed.get("iterationSeconds").asDouble();
    assertThat(p).isCloseTo(apart.get("iterationSeconds").asDouble(), withinPercentage(1));
    assertThat(whole.get("iterationSeconds").asDouble()).isGreaterThan(1.1 * p);
    // A file of the same documents prices the same.
    Path docs = dir.resolve("docs.txt");
    Files.writeString(docs, "1024 100\n");
    JsonNode file = simulate("--seq", "8192", "--micro-batch", "1", "--global-batch", "64",
        "--packed-seqs", docs.toString());
    assertThat(file.get("iterationSeconds").asDouble()).isEqualTo(p);
  }

  @Test
  void thePlanKeepsTheDocumentsAndMegatronMasksByThem() throws Exception {
    Path plan = dir.resolve("plan.json");
    CliRun r = CliRun.of("plan", "--model", "llama3-8b", "--cluster", "1x8:h100-80gb", "--seq",
        "8192", "--mean-doc-len", "2048", "--for", "megatron", "--out", plan.toString());
    assertThat(r.code()).as(r.err()).isZero();
    JsonNode saved = JSON.readTree(Files.readString(plan));
    assertThat(saved.at("/model/packing/lengths/0").asInt()).isEqualTo(2048);
    assertThat(saved.at("/model/packing/counts/0").asLong()).isEqualTo(1);
    CliRun s = CliRun.of("simulate", "--plan", plan.toString(), "--json");
    assertThat(s.code()).as(s.err()).isZero();
    assertThat(JSON.readTree(s.out()).get("iterationSeconds").asDouble())
        .isCloseTo(saved.get("iterationSeconds").asDouble(), withinPercentage(0.01));
    CliRun m = CliRun.of("export", "--plan", plan.toString(), "--to", "megatron");
    assertThat(m.code()).as(m.err()).isZero();
    assertThat(m.out()).contains("--dataloader-inter-document-masking")
        .contains("--reset-position-ids");
    // DeepSpeed's export does not mask by document: it says so, exit 3, and offers the run on
    // whole sequences.
    CliRun d = CliRun.of("export", "--plan", plan.toString(), "--to", "deepspeed");
    assertThat(d.code()).isEqualTo(3);
    assertThat(d.err() + d.out()).contains("does not mask attention by document");
  }

  @Test
  void badInputIsRefusedInOneLine() throws Exception {
    Path docs = dir.resolve("docs.txt");
    Files.writeString(docs, "1024\nlots\n");
    List<String> a = new ArrayList<>(BASE);
    a.addAll(List.of("--seq", "8192", "--micro-batch", "1", "--global-batch", "64"));
    String[][] cases = {{"--packed-seqs", docs.toString(), "docs.txt:2: 'lots' is not a length"},
        {"--packed-seqs", dir.toString(), "not a regular file"},
        {"--packed-seqs", dir.resolve("none.txt").toString(), "none.txt"},
        {"--mean-doc-len", "0", "--mean-doc-len must be a positive number of tokens"},
        {"--mean-doc-len", "8193", "--mean-doc-len 8193 exceeds the sequence length 8192"}};
    for (String[] c : cases) {
      List<String> args = new ArrayList<>(a);
      args.addAll(List.of(c[0], c[1]));
      CliRun r = CliRun.of(args.toArray(String[]::new));
      r.refusedInOneLine(2, c[2]);
    }
    List<String> both = new ArrayList<>(a);
    both.addAll(List.of("--mean-doc-len", "512", "--packed-seqs", docs.toString()));
    CliRun.of(both.toArray(String[]::new)).refusedInOneLine(2, "not both");
    // The document file is an input: no output may replace it.
    Files.writeString(docs, "1024\n");
    CliRun out = CliRun.of("plan", "--model", "llama3-8b", "--cluster", "1x8:h100-80gb",
        "--packed-seqs", docs.toString(), "--out", docs.toString(), "--force");
    assertThat(out.code()).isEqualTo(2);
    assertThat(Files.readString(docs)).isEqualTo("1024\n");
    // A plan carries its documents: the flags are refused beside --plan, not ignored.
    Path plan = dir.resolve("plan.json");
    assertThat(CliRun.of("plan", "--model", "llama3-8b", "--cluster", "1x8:h100-80gb",
        "--out", plan.toString()).code()).isZero();
    CliRun.of("simulate", "--plan", plan.toString(), "--mean-doc-len", "512")
        .refusedInOneLine(2, "--mean-doc-len");
    CliRun.of("simulate", "--plan", plan.toString(), "--seq", "2048")
        .refusedInOneLine(2, "drop --seq");
  }

  @Test
  void aPlanFilesDocumentsAreReadAsTheFlagsAre() throws Exception {
    Path docs = dir.resolve("docs.txt");
    Files.writeString(docs, "1024 8\n");
    Path plan = dir.resolve("packed.json");
    assertThat(CliRun.of("plan", "--model", "llama3-8b", "--cluster", "1x8:h100-80gb",
        "--packed-seqs", docs.toString(), "--out", plan.toString()).code()).isZero();
    String text = Files.readString(plan);
    assertThat(text).contains("\"packing\"");
    ObjectMapper json = new ObjectMapper();
    // Counts past 2^40 in all, here two that would wrap a long when summed; and a packing that
    // lists no document.
    String[][] edits = {
        {"{\"lengths\":[512,1024],\"counts\":[9223372036854775807,9223372036854775807]}",
            "at most 1099511627776 documents"},
        {"{\"lengths\":[1024],\"counts\":[1099511627777]}", "at most 1099511627776 documents"},
        {"{\"lengths\":[],\"counts\":[]}", "lists no document length"}};
    for (String[] e : edits) {
      ObjectNode root = (ObjectNode) json.readTree(text);
      ((ObjectNode) root.get("model")).set("packing", json.readTree(e[0]));
      Path bad = dir.resolve("bad.json");
      Files.writeString(bad, json.writeValueAsString(root));
      CliRun.of("simulate", "--plan", bad.toString()).refusedInOneLine(2, e[1]);
    }
  }
}
