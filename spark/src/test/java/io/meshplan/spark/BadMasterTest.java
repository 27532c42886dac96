package io.meshplan.spark;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.cli.Main;
import io.meshplan.util.InputException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.apache.spark.SparkConf;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Every bad {@code --spark} master ends in one line on meshplan's standard error and exit 2:
 * one Spark cannot parse (garbage, {@code local[0]}, {@code k8s://} without a server), one whose
 * cluster manager is not on the class path ({@code k8s://}, {@code yarn}: this module ships
 * neither spark-kubernetes nor spark-yarn), one nobody listens at ({@code spark://}). Spark's own
 * log stays off the process's standard error unless {@code --debug} is given.
 */
class BadMasterTest {
  @AfterEach
  void logOffAgain() {
    SparkLogging.route(false);
  }

  private static int closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  /** What the process printed on its own standard error (Spark's log) while {@code run} ran. */
  private static String processStderr(Supplier<?> run) {
    PrintStream before = System.err;
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    System.setErr(new PrintStream(bytes, true, StandardCharsets.UTF_8));
    try {
      run.get();
    } finally {
      System.setErr(before);
    }
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void everyBadMasterIsOneLineAndExit2() throws IOException {
    List<String> masters = new ArrayList<>(List.of("k8s://https://127.0.0.1:1", "yarn",
        "local[0]", "garbage", "k8s://", "k8s://ftp://x", "mesos://127.0.0.1:5050",
        "spark://127.0.0.1:" + closedPort(), "spark://no-such-host.invalid:7077", "local[x]"));
    for (String master : masters) {
      for (String command : new String[] {"plan", "sweep"}) {
        List<String> args = new ArrayList<>(command.equals("plan")
            ? List.of("plan", "--model", "opt-125m", "--layers", "2", "--cluster",
                "1x8:h100-80gb", "--global-batch", "8")
            : List.of("sweep", "--grid", "examples/sweep.yaml"));
        args.addAll(List.of("--spark", master));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int[] code = new int[1];
        String log = processStderr(() -> code[0] = Main.run(new PrintWriter(out),
            new PrintWriter(err), args.toArray(String[]::new)));
        assertThat(code[0]).as(args + "\n" + err).isEqualTo(2);
        assertThat(err.toString().lines()).as(args.toString()).hasSize(1);
        assertThat(err.toString()).as(args.toString()).startsWith("meshplan: error: Spark master")
            .doesNotContain("\tat ").doesNotContain("Exception");
        assertThat(out.toString()).as(args.toString()).isEmpty();
        assertThat(log).as(args.toString()).isEmpty();
      }
    }
  }

  /**
   * A context Spark cannot start (here a Kubernetes master with no cluster manager for it, given
   * straight to the executor) is one line of bad input; Spark's "Error initializing
   * SparkContext" and its stack trace reach standard error only when asked for.
   */
  @Test
  void aContextThatCannotStartIsBadInputAndSparksLogIsOffUnlessAsked() {
    SparkConf conf = SparkExecutorProvider.conf("k8s://https://127.0.0.1:1",
        java.util.Map.of());
    String quiet = processStderr(() -> {
      assertThatThrownBy(() -> new SparkExecutor(conf)).isInstanceOf(InputException.class)
          .hasMessageStartingWith("Spark master k8s://https://127.0.0.1:1: Spark could not start"
              + " (Could not parse Master URL")
          .hasMessageNotContaining("\n");
      return null;
    });
    assertThat(quiet).isEmpty();
    SparkLogging.route(true);
    String loud = processStderr(() -> {
      assertThatThrownBy(() -> new SparkExecutor(conf)).isInstanceOf(InputException.class);
      return null;
    });
    assertThat(loud).contains("ERROR SparkContext: Error initializing SparkContext.");
  }

  /** With --debug, the same refusal carries its stack trace after the line. */
  @Test
  void debugAddsTheStackTrace() {
    StringWriter err = new StringWriter();
    String log = processStderr(() -> Main.run(new PrintWriter(new StringWriter()),
        new PrintWriter(err), "plan", "--model", "opt-125m", "--cluster", "1x8:h100-80gb",
        "--spark", "yarn", "--debug"));
    assertThat(err.toString()).startsWith("meshplan: error: Spark master yarn: ")
        .contains("\tat io.meshplan.spark.ClusterManagers");
    assertThat(log).isEmpty();
  }
}
