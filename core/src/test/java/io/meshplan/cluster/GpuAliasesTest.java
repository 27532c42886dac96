package io.meshplan.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.meshplan.util.InputException;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * Every GPU of the catalog answers to its own name and, where one part has it alone, to its
 * short name: {@code h100} and {@code h200} are the SXM parts the catalog prices; {@code v100}
 * and {@code a100} each fit two catalog entries and are refused naming both; every refusal lists
 * every name that is accepted.
 */
class GpuAliasesTest {
  @Test
  void eachShortNameIsItsSxmPartAndAmbiguousOnesAreRefused() {
    assertThat(ClusterSpec.parse("4x8:h100").gpu().name()).isEqualTo("h100-80gb");
    assertThat(ClusterSpec.parse("4x8:H100").gpu().name()).isEqualTo("h100-80gb");
    assertThat(ClusterSpec.parse("4x8:h200").gpu().name()).isEqualTo("h200-141gb");
    assertThat(ClusterSpec.parse("4x8:b200").gpu().name()).isEqualTo("b200");
    assertThat(ClusterSpec.parse("4x8:h100").toShortString()).isEqualTo(
        "4x8:h100-80gb:ib-ndr400");
    assertThat(ClusterSpec.parse("4x8:h100:roce-400").fabric())
        .isEqualTo(ClusterSpec.parse("4x8:h100-80gb:roce-400").fabric());
    assertThatThrownBy(() -> ClusterSpec.parse("4x8:a100")).isInstanceOf(InputException.class)
        .hasMessageContaining("unknown gpu 'a100': it is a100-40gb or a100-80gb; valid: ");
    assertThatThrownBy(() -> ClusterSpec.parse("4x8:v100")).isInstanceOf(InputException.class)
        .hasMessageContaining("it is v100-16gb or v100-32gb");
  }

  @Test
  void everyAcceptedNameIsListedInTheRefusalAndEveryListedNameIsAccepted() {
    String message;
    try {
      ClusterSpec.parse("1x8:x999");
      throw new AssertionError("x999 accepted");
    } catch (InputException e) {
      message = e.getMessage();
    }
    String list = message.substring(message.indexOf("valid: ") + "valid: ".length());
    List<String> listed = new java.util.ArrayList<>();
    for (String item : list.split(", ")) {
      // "h100-80gb (or h100)": both names.
      for (String w : item.replace("(or ", "").replace(")", "").split(" ")) {
        listed.add(w);
      }
    }
    assertThat(listed).containsExactlyInAnyOrderElementsOf(GpuCatalog.acceptedNames());
    for (String name : listed) {
      // One host of a rack-scale GPU (4 of GB200's 72), one board of any other.
      GpuEntry e = HardwareCatalog.shipped().gpu(name).orElseThrow();
      GpuSpec g = ClusterSpec.parse("1x" + Math.min(8, e.hostGpus()) + ":" + name).gpu();
      assertThat(GpuCatalog.find(name.toUpperCase(Locale.ROOT))).contains(g);
    }
    // Every catalog GPU, checked for a short name: the part before the memory size, accepted
    // when exactly one entry gives it as an alias (h100 is the SXM part beside other H100s).
    for (String name : GpuCatalog.names()) {
      String shortName = name.replaceAll("-\\d+gb$", "");
      long parts = GpuCatalog.names().stream().filter(n -> n.equals(shortName)
          || HardwareCatalog.shipped().gpu(n).orElseThrow().aliases().contains(shortName))
          .count();
      assertThat(GpuCatalog.find(shortName).isPresent()).as(shortName).isEqualTo(parts == 1);
    }
    // The short names are h100 and h200 alone, beside every catalog name; the catalog has these
    // seven and may grow by YAML entries without another short name.
    assertThat(GpuCatalog.names()).contains("a100-40gb", "a100-80gb", "b200", "h100-80gb",
        "h200-141gb", "v100-16gb", "v100-32gb");
    List<String> accepted = new java.util.ArrayList<>(GpuCatalog.names());
    accepted.addAll(List.of("h100", "h200"));
    assertThat(GpuCatalog.acceptedNames()).containsExactlyElementsOf(
        accepted.stream().sorted().toList());
  }
}
