package io.meshplan.doctor;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.GeneralCodingRules;
import org.junit.jupiter.api.Test;

/** The doctor package is a library layer: it never prints and never reaches up into the CLI. */
class DoctorArchitectureTest {
  private static final JavaClasses DOCTOR = new ClassFileImporter()
      .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
      .importPackages("io.meshplan.doctor");

  @Test
  void doesNotPrint() {
    GeneralCodingRules.NO_CLASSES_SHOULD_ACCESS_STANDARD_STREAMS.check(DOCTOR);
  }

  @Test
  void doesNotDependOnTheCli() {
    noClasses().should().dependOnClassesThat().resideInAPackage("io.meshplan.cli..").check(DOCTOR);
  }
}
