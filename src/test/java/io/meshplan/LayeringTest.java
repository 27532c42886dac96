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
        .layer("export").definedBy("io.meshplan.export..")
        .layer("deploy").definedBy("io.meshplan.deploy..")
        .layer("plan").definedBy("io.meshplan.plan..")
        .layer("intraop").definedBy("io.meshplan.intraop..")
        .layer("model").definedBy("io.meshplan.model..")
        .layer("sharding").definedBy("io.meshplan.sharding..")
        .layer("calibrate").definedBy("io.meshplan.calibrate..")
        .layer("doctor").definedBy("io.meshplan.doctor..")
        .layer("cluster").definedBy("io.meshplan.cluster..")
        .layer("graph").definedBy("io.meshplan.graph..")
        .layer("util").definedBy("io.meshplan.util..")
        .whereLayer("cli").mayNotBeAccessedByAnyLayer()
        .whereLayer("export").mayOnlyBeAccessedByLayers("cli")
        .whereLayer("deploy").mayOnlyBeAccessedByLayers("cli")
        .whereLayer("intraop").mayOnlyBeAccessedByLayers("cli")
        .whereLayer("plan").mayOnlyBeAccessedByLayers("cli", "export", "deploy")
        .whereLayer("model").mayOnlyBeAccessedByLayers("cli", "intraop", "plan", "export",
            "deploy")
        .whereLayer("sharding").mayOnlyBeAccessedByLayers("cli", "intraop")
        .whereLayer("calibrate").mayOnlyBeAccessedByLayers("cli")
        .whereLayer("doctor").mayOnlyBeAccessedByLayers("cli", "export", "deploy")
        .whereLayer("cluster").mayOnlyBeAccessedByLayers("cli", "intraop", "sharding",
            "calibrate", "export", "deploy")
        .whereLayer("graph").mayOnlyBeAccessedByLayers("cli", "intraop", "model", "sharding",
            "cluster", "calibrate", "plan", "export", "deploy")
        .check(classes);
  }
}
