package io.meshplan.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad input to {@code calibrate --train}: each is one line on stderr, exit 2, no stack trace, and
 * nothing hangs.
 */
class CalibrateTrainHostileTest {
  @TempDir Path dir;

  private static final String A100 = "1x4:a100-80gb";

  private CliRun train(Path log, String... more) {
    String[] base = {"calibrate", "--train", log.toString(), "--cluster", A100, "--out",
        dir.resolve("out.yaml").toString()};
    String[] args = java.util.Arrays.copyOf(base, base.length + more.length);
    System.arraycopy(more, 0, args, base.length, more.length);
    return CliRun.of(args);
  }

  private Path write(String name, String text) throws IOException {
    Path f = dir.resolve(name);
    Files.writeString(f, text);
    return f;
  }

  private static String good() {
    return CalibrateTrainCliTest.megatronLog(3000, new double[] {500, 500});
  }

  /**
   * A log states one run: Megatron-LM's world size is tensor x pipeline x context x data
   * parallel size, torchtitan's device mesh the product of its config's degrees and its global
   * batch the local batch on every data-parallel rank; a figure is read whole or refused, not up
   * to its first odd character.
   */
  @Test
  void aLogThatContradictsItselfIsRefused() throws IOException {
    // tp 2 x dp 8 = 16 GPUs, but the log's world is 4.
    train(write("world.log", CalibrateTrainCliTest.megatronLog(3000, new double[] {500, 500},
        java.util.Map.of("data_parallel_size", "8")))).refusedInOneLine(ExitCodes.BAD_INPUT,
        "world.log: argument world_size = 4 not tensor x pipeline x context x data parallel "
            + "size (2 x 1 x 1 x 8 = 16)");
    train(write("e3.log", good().replace("(ms): 500.0", "(ms): 500.0e3")))
        .refusedInOneLine(ExitCodes.BAD_INPUT, "elapsed time per iteration '500.0e3' is not "
            + "milliseconds");
    // A time of 0 ms was dropped from the median without a word; '+16' was read as 16.
    train(write("zero.log", good().replaceFirst("\\(ms\\): 500\\.0", "(ms): 0.0")))
        .refusedInOneLine(ExitCodes.BAD_INPUT, "elapsed time per iteration '0.0' is not a "
            + "positive time");
    train(write("plus.log", good().replaceFirst("(num_layers \\.+) ([0-9]+)", "$1 +$2")))
        .refusedInOneLine(ExitCodes.BAD_INPUT, "num_layers");
    Path example = io.meshplan.calibrate.TitanLogs.EXAMPLE;
    Path toml = Path.of("examples/calibrate/torchtitan_llama3_8b.toml");
    String text = Files.readString(example);
    String[][] titan = {
        {"shard.log", text, "data_parallel_shard_degree = -1", "data_parallel_shard_degree = 3",
            "its device mesh has 8 GPUs, but the --config's degrees make 3"},
        {"mesh.log", text.replace("['dp_shard'], [8]", "['dp_shard'], [4]"), "", "",
            "its global batch size 8 is not the --config's local batch 1 x 4"},
        {"batch.log", text.replace("global batch size 8,", "global batch size 800,"), "", "",
            "its global batch size 800 is not the --config's local batch 1 x 8"},
        {"tps.log", text.replaceFirst("tps: 6,511", "tps: 6,511e3"), "", "",
            "tps '6,511e3' is not tokens per second"},
        {"commas.log", text.replaceFirst("tps: 6,511", "tps: 6,5,1,1"), "", "",
            "tps '6,5,1,1' is not tokens per second"},
        {"two.log", text + "Building 1-D device mesh with ['dp_shard'], [4]\n", "", "",
            "a device mesh of 4 GPUs after one of 8: the log states more than one run"},
        // Signed, zero and fullwidth rates were dropped without a word; a batch or step past
        // ten digits skipped its check.
        {"neg.log", text.replaceFirst("tps: 6,511", "tps: -6,511"), "", "",
            "tps '-6,511' is not tokens per second"},
        {"zero.log", text.replaceFirst("tps: 6,511", "tps: 0"), "", "",
            "tps '0' is not tokens per second"},
        {"plus.log", text.replaceFirst("tps: 6,511", "tps: +6,511"), "", "",
            "tps '+6,511' is not tokens per second"},
        {"wide.log", text.replaceFirst("tps: 6,511", "tps: \uff16,511"), "", "",
            "tps '\uff16,511' is not tokens per second"},
        {"bigbatch.log", text.replace("global batch size 8,",
            "global batch size 99999999999999999999,"), "", "",
            "global batch size '99999999999999999999' is not a batch as torchtitan prints it"},
        {"bigstep.log", text.replaceFirst("step: *([0-9]+)", "step: 99999999999999999999"), "", "",
            "step '99999999999999999999' is not a step number"}};
    for (String[] c : titan) {
      Path cfg = write(c[0] + ".toml", Files.readString(toml).replace(c[2], c[3]));
      CliRun.of("calibrate", "--train", write(c[0], c[1]).toString(), "--config",
          cfg.toString(), "--cluster", "1x8:h100-80gb", "--out", dir.resolve("out.yaml")
              .toString()).refusedInOneLine(ExitCodes.BAD_INPUT, c[0] + ":");
      CliRun.of("calibrate", "--train", dir.resolve(c[0]).toString(), "--config",
          cfg.toString(), "--cluster", "1x8:h100-80gb", "--out", dir.resolve("out.yaml")
              .toString()).refusedInOneLine(ExitCodes.BAD_INPUT, c[4]);
    }
    assertThat(Files.exists(dir.resolve("out.yaml"))).isFalse();
  }

  /** A log named twice, or a copy of one, is one run: read once, with a warning. */
  @Test
  void aRunGivenTwiceIsReadOnce() throws IOException {
    // 3 s an iteration: slower than the kernel-level 1x4 A100 time, so a scale fits.
    String slow = CalibrateTrainCliTest.megatronLog(3000, new double[] {3000, 3000});
    Path log = write("a.log", slow);
    Path copy = write("copy.log", slow);
    Path out = dir.resolve("out.yaml");
    CliRun r = CliRun.of("calibrate", "--train", log.toString(), log.toString(), copy.toString(),
        "--cluster", A100, "--out", out.toString());
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.err()).contains("a.log is given more than once; read once")
        .contains("copy.log states the same run as " + log + " (the same job and iteration "
            + "times); read once");
    assertThat(r.out()).contains("from 1 run(s)");
    assertThat(io.meshplan.calibrate.ProfileFiles.read(out).compute().get("ampere").runs())
        .isEqualTo(1);
  }

  @Test
  void seededGarbageIsRefused() throws IOException {
    Random rnd = new Random(11);
    for (int c = 0; c < 20; c++) {
      byte[] b = new byte[1 + rnd.nextInt(4000)];
      for (int i = 0; i < b.length; i++) {
        b[i] = (byte) (32 + rnd.nextInt(95));
      }
      if (rnd.nextBoolean()) {
        b[rnd.nextInt(b.length)] = '\n';
      }
      Path f = dir.resolve("g" + c + ".log");
      Files.write(f, b);
      train(f).refusedInOneLine(ExitCodes.BAD_INPUT, "g" + c + ".log");
    }
    assertThat(Files.exists(dir.resolve("out.yaml"))).isFalse();
  }

  @Test
  void truncatedLogsAreRefused() throws IOException {
    String log = good();
    // Cut inside the arguments block: the block's end never comes and fields are missing.
    train(write("cut-args.log", log.substring(0, log.indexOf("hidden_size"))))
        .refusedInOneLine(ExitCodes.BAD_INPUT, "missing from the '---- arguments ----' block");
    // Cut after the first iteration line: only warm-up is left.
    int second = log.indexOf(" [2024", log.indexOf(" [2024") + 1);
    train(write("cut-iter.log", log.substring(0, second)))
        .refusedInOneLine(ExitCodes.BAD_INPUT, "1 usable");
  }

  /**
   * A pipeline split the run's arguments state but meshplan cannot rebuild is the log's fault, and
   * the line says so: a layout that expands past the cap, and one whose layers are not the
   * model's.
   */
  @Test
  void badPipelineSplitsInTheArgumentsNameTheLog() throws IOException {
    java.util.Map<String, String> split = new java.util.HashMap<>(java.util.Map.of(
        "num_layers", "7", "pipeline_model_parallel_size", "2", "data_parallel_size", "1",
        "virtual_pipeline_model_parallel_size", "2", "pipeline_model_parallel_layout",
        "Et|tt|tt|t*999999999999L"));
    train(write("huge-layout.log", CalibrateTrainCliTest.megatronLog(3000,
        new double[] {500, 500}, split))).refusedInOneLine(ExitCodes.BAD_INPUT,
        "huge-layout.log: argument pipeline_model_parallel_layout: repeats 't' more than");
    split.put("pipeline_model_parallel_layout", "Et|tt|tt|tttL");
    train(write("layers.log", CalibrateTrainCliTest.megatronLog(3000, new double[] {500, 500},
        split))).refusedInOneLine(ExitCodes.BAD_INPUT,
        "layers.log: --pipeline-model-parallel-layout places 8 transformer layers, but the model "
            + "has 7");
    assertThat(Files.exists(dir.resolve("out.yaml"))).isFalse();
  }

  /**
   * Sizes at the edge of an int multiply past it: tp 2 x cp 2^31 - 1 GPUs, and torchtitan's
   * shard x replicate degrees, are refused in one line (no wrap into a small or negative count),
   * as are the new readings' bad values: experts that EP does not divide, more experts per token
   * than experts, and a mixture-of-experts run on Megatron-Core's default allgather dispatcher.
   */
  @Test
  void sizesPastAnIntAndBadExpertArgumentsAreRefused() throws IOException {
    train(write("cp.log", CalibrateTrainCliTest.megatronLog(3000, new double[] {500, 500},
        java.util.Map.of("context_parallel_size", "2147483647", "data_parallel_size", "1"))))
        .refusedInOneLine(ExitCodes.BAD_INPUT, "cp.log: argument world_size = 4 not tensor x "
            + "pipeline x context x data parallel size (2 x 1 x 2147483647 x 1 = 4294967294)");
    java.util.Map<String, String> moe = new java.util.HashMap<>(java.util.Map.of("num_experts",
        "8", "moe_router_topk", "2", "moe_ffn_hidden_size", "1408", "moe_token_dispatcher_type",
        "alltoall", "expert_model_parallel_size", "3", "sequence_parallel", "True"));
    train(write("ep.log", CalibrateTrainCliTest.megatronLog(3000, new double[] {500, 500}, moe)))
        .refusedInOneLine(ExitCodes.BAD_INPUT, "ep.log: expert-parallel size 3 does not divide");
    moe.put("expert_model_parallel_size", "2");
    moe.put("moe_router_topk", "9");
    train(write("topk.log", CalibrateTrainCliTest.megatronLog(3000, new double[] {500, 500},
        moe))).refusedInOneLine(ExitCodes.BAD_INPUT, "topk.log: experts per token must be");
    moe.remove("moe_token_dispatcher_type");
    train(write("dispatch.log", CalibrateTrainCliTest.megatronLog(3000, new double[] {500, 500},
        moe))).refusedInOneLine(ExitCodes.BAD_INPUT, "Megatron-Core's default, allgather");
    Path toml = write("hsdp.toml", Files.readString(Path.of(
        "examples/calibrate/torchtitan_llama3_8b.toml"))
        .replace("data_parallel_replicate_degree = 1", "data_parallel_replicate_degree = 2")
        .replace("data_parallel_shard_degree = -1", "data_parallel_shard_degree = 2147483647"));
    train(Path.of("examples/calibrate/torchtitan_llama3_8b_h100.log"), "--config",
        toml.toString()).refusedInOneLine(ExitCodes.BAD_INPUT, "= 4294967294 is past 2^31 - 1");
    assertThat(Files.exists(dir.resolve("out.yaml"))).isFalse();
  }

  @Test
  void hugeLogsAreRefused() throws IOException {
    Path f = dir.resolve("huge.log");
    try (RandomAccessFile raf = new RandomAccessFile(f.toFile(), "rw")) {
      raf.write(good().getBytes(StandardCharsets.UTF_8));
      raf.setLength((64L << 20) + 1);
    }
    train(f).refusedInOneLine(ExitCodes.BAD_INPUT, "larger than");
    Path line = write("long-line.log", good() + "x".repeat(70_000) + "\n");
    train(line).refusedInOneLine(ExitCodes.BAD_INPUT, "line longer than 65536 characters");
  }

  @Test
  @Timeout(value = 30, unit = TimeUnit.SECONDS)
  void devZeroAndFifoAreRefusedWithoutHanging() throws IOException, InterruptedException {
    Path zero = Path.of("/dev/zero");
    assumeTrue(Files.exists(zero), "no /dev/zero on this system");
    train(zero).refusedInOneLine(ExitCodes.BAD_INPUT, "not a regular file");
    Path fifo = dir.resolve("fifo.log");
    Process p = new ProcessBuilder("mkfifo", fifo.toString()).start();
    assumeTrue(p.waitFor() == 0, "mkfifo is not available");
    train(fifo).refusedInOneLine(ExitCodes.BAD_INPUT, "not a regular file");
  }

  @Test
  void impossibleOrUnderdeterminedFitsAreRefused() throws IOException {
    // 1 ms per iteration is below the communication of the run alone.
    train(write("fast.log", CalibrateTrainCliTest.megatronLog(3000, new double[] {1, 1})))
        .refusedInOneLine(ExitCodes.BAD_INPUT, "no compute scale explains it");
    // A torchtitan log without its config does not state the job.
    Path titan = Path.of("examples/calibrate/torchtitan_llama3_8b_h100.log");
    CliRun.of("calibrate", "--train", titan.toString(), "--cluster", "1x8:h100-80gb", "--out",
        dir.resolve("t.yaml").toString()).refusedInOneLine(ExitCodes.BAD_INPUT, "--config");
    // The log names H100s; --cluster has A100s.
    CliRun.of("calibrate", "--train", titan.toString(), "--config",
        "examples/calibrate/torchtitan_llama3_8b.toml", "--cluster", "1x8:a100-80gb", "--out",
        dir.resolve("t.yaml").toString()).refusedInOneLine(ExitCodes.BAD_INPUT, "ran on h100 GPUs");
    // More GPUs than --cluster has.
    train(write("big.log", good().replaceAll("world_size \\.+ 4", "world_size ... 64")
        .replaceAll("data_parallel_size \\.+ 2", "data_parallel_size ... 32")))
        .refusedInOneLine(ExitCodes.BAD_INPUT, "more than --cluster");
  }

  @Test
  void outputNamingAnInputAndMixedModesAreRefused() throws IOException {
    Path log = write("run.log", good());
    CliRun.of("calibrate", "--train", log.toString(), "--cluster", A100, "--out", log.toString())
        .refusedInOneLine(ExitCodes.BAD_INPUT, "--out");
    assertThat(Files.readString(log)).isEqualTo(good());
    CliRun.of("calibrate", log.toString(), "--train", log.toString(), "--cluster", A100, "--out",
        dir.resolve("p.yaml").toString()).refusedInOneLine(ExitCodes.BAD_INPUT, "one kind");
  }
}
