package io.meshplan;

import static com.tngtech.archunit.library.Architectures.layeredArchitecture;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** Imports point downwards only, as DESIGN.md's package table says. */
class LayeringTest {
  @Test
  void packagesAreLayered() {
    var classes = new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("io.meshplan");
    layeredArchitecture().consideringOnlyDependenciesInLayers()
        .layer("cli").definedBy("io.meshplan.cli..")
        .layer("sim").definedBy("io.meshplan.sim..")
        .layer("interop").definedBy("io.meshplan.interop..")
        .layer("intraop").definedBy("io.meshplan.intraop..")
        .layer("model").definedBy("io.meshplan.model..")
        .layer("sharding").definedBy("io.meshplan.sharding..")
        .layer("calibrate").definedBy("io.meshplan.calibrate..")
        .layer("doctor").definedBy("io.meshplan.doctor..")
        .layer("cluster").definedBy("io.meshplan.cluster..")
        .layer("graph").definedBy("io.meshplan.graph..")
        .layer("util").definedBy("io.meshplan.util..")
        .whereLayer("cli").mayNotBeAccessedByAnyLayer()
        .whereLayer("sim").mayOnlyBeAccessedByLayers("cli")
        .whereLayer("interop").mayOnlyBeAccessedByLayers("cli")
        .whereLayer("intraop").mayOnlyBeAccessedByLayers("cli")
        .whereLayer("model").mayOnlyBeAccessedByLayers("cli", "intraop")
        .whereLayer("sharding").mayOnlyBeAccessedByLayers("cli", "intraop")
        .whereLayer("calibrate").mayOnlyBeAccessedByLayers("cli")
        .whereLayer("doctor").mayOnlyBeAccessedByLayers("cli")
        .whereLayer("cluster").mayOnlyBeAccessedByLayers("cli", "intraop", "sharding",
            "calibrate")
        .whereLayer("graph").mayOnlyBeAccessedByLayers("cli", "intraop", "model", "sharding",
            "cluster", "calibrate")
        .check(classes);
  }
}
