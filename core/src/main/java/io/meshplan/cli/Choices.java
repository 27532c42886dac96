package io.meshplan.cli;

import io.meshplan.calibrate.Launcher;
import io.meshplan.deploy.DeployTarget;
import io.meshplan.deploy.RayMode;
import io.meshplan.export.ExportTarget;
import io.meshplan.graph.DType;
import io.meshplan.intraop.SolverOptions;
import io.meshplan.model.Attention;
import io.meshplan.model.Fp8Training;
import io.meshplan.model.Recompute;
import io.meshplan.model.RecomputeModule;
import io.meshplan.util.InputException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;

/**
 * The words of every option that takes one of a fixed set, each list taken from the code that
 * parses the option (an enum's labels, or the words a switch takes), so that three things agree:
 * the help shows the list (picocli's {@code completionCandidates} and {@code
 * ${COMPLETION-CANDIDATES}}), the refusal of another word lists it ({@link #pick}), and the
 * parser takes exactly those words (any case). {@code HelpTruthCliTest} runs every word of every
 * list through its command.
 */
final class Choices {
  private Choices() {}

  /**
   * The word a value names, or a one-line refusal listing the words.
   *
   * @param flag the option, for the message
   * @param value what was given
   * @param words the words the option takes
   * @return the word, as listed
   * @throws InputException naming the value and listing the words
   */
  static String pick(String flag, String value, Iterable<String> words) {
    String v = value == null ? ""
        : io.meshplan.util.Words.trimmed(value).toLowerCase(Locale.ROOT);
    for (String w : words) {
      if (w.toLowerCase(Locale.ROOT).equals(v)) {
        return w;
      }
    }
    throw new InputException(flag + " '" + value + "' is unknown; use " + or(words));
  }

  /**
   * Words as a list in prose.
   *
   * @param words the words
   * @return {@code a, b or c}
   */
  static String or(Iterable<String> words) {
    List<String> w = new ArrayList<>();
    words.forEach(w::add);
    return w.size() < 2 ? String.join("", w)
        : String.join(", ", w.subList(0, w.size() - 1)) + " or " + w.get(w.size() - 1);
  }

  /** A fixed list of words as picocli's completion candidates. */
  private abstract static class Words implements Iterable<String> {
    abstract List<String> words();

    @Override
    public Iterator<String> iterator() {
      return words().iterator();
    }
  }

  /** {@code export --to}: the export targets' labels. */
  static final class ExportTargets extends Words {
    @Override
    List<String> words() {
      return Arrays.stream(ExportTarget.values()).map(ExportTarget::label).distinct().toList();
    }
  }

  /** {@code export --framework-version}: torchtitan's main branch and its v0.2.2 release. */
  static final class FrameworkVersions extends Words {
    /** The words of torchtitan's main branch, the first its name. */
    static final List<String> MAIN = List.of("main", "current", "b5bcd76");
    /** The words of torchtitan v0.2.2, the first its name. */
    static final List<String> V022 = List.of("0.2.2", "v0.2.2", "0.2");

    @Override
    List<String> words() {
      List<String> w = new ArrayList<>(MAIN);
      w.addAll(V022);
      return w;
    }
  }

  /** {@code deploy --target}: the deploy targets' labels. */
  static final class DeployTargets extends Words {
    @Override
    List<String> words() {
      return Arrays.stream(DeployTarget.values()).map(DeployTarget::label).toList();
    }
  }

  /** {@code deploy --ray-mode}: the Ray modes' labels. */
  static final class RayModes extends Words {
    @Override
    List<String> words() {
      return Arrays.stream(RayMode.values()).map(RayMode::label).toList();
    }
  }

  /** {@code deploy --pod-network}: the two words and the form of a Multus network. */
  static final class PodNetworks extends Words {
    @Override
    List<String> words() {
      return List.of("default", "host", "multus:NS/NAME[@IFACE]");
    }
  }

  /** {@code plan --schedule}: the planner's choice, or 1F1B only. */
  static final class PlanSchedules extends Words {
    @Override
    List<String> words() {
      return List.of("auto", "1f1b");
    }
  }

  /** {@code simulate/export --schedule}: 1F1B or GPipe. */
  static final class Schedules extends Words {
    @Override
    List<String> words() {
      return List.of("1f1b", "gpipe");
    }
  }

  /** {@code --recompute}: the recomputation labels. */
  static final class Recomputes extends Words {
    @Override
    List<String> words() {
      return Arrays.stream(Recompute.values()).map(Recompute::label).toList();
    }
  }

  /** {@code --recompute-modules}: the submodules, comma-separated on the command line. */
  static final class RecomputeModules extends Words {
    @Override
    List<String> words() {
      return Arrays.stream(RecomputeModule.values()).map(RecomputeModule::label).toList();
    }
  }

  /** {@code --cp-comm-type}: Megatron-LM's p2p, all_gather (torchtitan's allgather) and a2a. */
  static final class CpCommTypes extends Words {
    @Override
    List<String> words() {
      return io.meshplan.plan.ContextExchange.words();
    }
  }

  /** {@code --attention}: the GPU's default, or an attention's label. */
  static final class Attentions extends Words {
    @Override
    List<String> words() {
      List<String> w = new ArrayList<>(List.of("auto"));
      Arrays.stream(Attention.values()).map(Attention::label).forEach(w::add);
      w.addAll(io.meshplan.cluster.AttentionKernel.words());
      return w;
    }
  }

  /** {@code --dtype}: the element types training runs in, and the FP8 recipe. */
  static final class Dtypes extends Words {
    @Override
    List<String> words() {
      List<String> w = new ArrayList<>();
      for (DType t : new DType[] {DType.F32, DType.BF16, DType.F16}) {
        if (Fp8Training.trains(t)) {
          w.add(Fp8Training.word(t));
        }
      }
      w.add(Fp8Training.WORD);
      return w;
    }
  }

  /** {@code shard --solver}: the solver kinds. */
  static final class Solvers extends Words {
    @Override
    List<String> words() {
      return Arrays.stream(SolverOptions.Kind.values())
          .map(k -> k.name().toLowerCase(Locale.ROOT)).toList();
    }
  }

  /** {@code shard --param-liveness}: resident, or Alpa's prototype's. */
  static final class ParamLiveness extends Words {
    @Override
    List<String> words() {
      return List.of("resident", "alpa");
    }
  }

  /** {@code bench --launcher}: the launchers. */
  static final class Launchers extends Words {
    @Override
    List<String> words() {
      return Arrays.stream(Launcher.values()).map(l -> l.name().toLowerCase(Locale.ROOT))
          .toList();
    }
  }
}
