package io.meshplan;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * Imports point downwards only, as docs/ARCHITECTURE.md's package map says; packages form no cycle; only
 * the command line prints or exits.
 */
class LayeringTest {
  private static final JavaClasses CLASSES = new ClassFileImporter()
      .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
      .importPackages("io.meshplan");

  @Test
  void packagesAreLayered() {
    layeredArchitecture().consideringOnlyDependenciesInLayers()
        .layer("cli").definedBy("io.meshplan.cli..")
        .layer("report").definedBy("io.meshplan.report..")
        .layer("export").definedBy("io.meshplan.export..")
        .layer("deploy").definedBy("io.meshplan.deploy..")
        .layer("sweep").definedBy("io.meshplan.sweep..")
        .layer("planner").definedBy("io.meshplan.planner..")
        .layer("interop").definedBy("io.meshplan.interop..")
        .layer("sim").definedBy("io.meshplan.sim..")
        .layer("plan").definedBy("io.meshplan.plan..")
        .layer("intraop").definedBy("io.meshplan.intraop..")
        .layer("model").definedBy("io.meshplan.model..")
        .layer("sharding").definedBy("io.meshplan.sharding..")
        .layer("calibrate").definedBy("io.meshplan.calibrate..")
        .layer("doctor").definedBy("io.meshplan.doctor..")
        .layer("cluster").definedBy("io.meshplan.cluster..")
        .layer("graph").definedBy("io.meshplan.graph..")
        .layer("exec").definedBy("io.meshplan.exec..")
        .layer("framework").definedBy("io.meshplan.framework..")
        .layer("util").definedBy("io.meshplan.util..")
        .whereLayer("cli").mayNotBeAccessedByAnyLayer()
        .whereLayer("report").mayOnlyBeAccessedByLayers("cli")
        .whereLayer("export").mayOnlyBeAccessedByLayers("cli")
        .whereLayer("deploy").mayOnlyBeAccessedByLayers("cli")
        .whereLayer("sweep").mayOnlyBeAccessedByLayers("cli")
        .whereLayer("planner").mayOnlyBeAccessedByLayers("cli", "sweep")
        .whereLayer("interop").mayOnlyBeAccessedByLayers("cli", "sweep", "planner")
        .whereLayer("sim").mayOnlyBeAccessedByLayers("cli", "sweep", "planner", "interop",
            "report")
        .whereLayer("plan").mayOnlyBeAccessedByLayers("cli", "sweep", "planner", "interop",
            "export", "deploy", "report")
        .whereLayer("intraop").mayOnlyBeAccessedByLayers("cli", "sweep", "planner", "interop")
        .whereLayer("model").mayOnlyBeAccessedByLayers("cli", "sweep", "planner", "interop", "plan",
            "intraop", "export", "deploy", "report")
        .whereLayer("sharding").mayOnlyBeAccessedByLayers("cli", "planner", "interop", "intraop")
        .whereLayer("calibrate").mayOnlyBeAccessedByLayers("cli", "planner")
        .whereLayer("doctor").mayOnlyBeAccessedByLayers("cli", "export", "deploy")
        .whereLayer("cluster").mayOnlyBeAccessedByLayers("cli", "sweep", "planner", "interop",
            "intraop", "plan",
            "sharding", "calibrate", "export", "deploy", "report")
        .whereLayer("graph").mayOnlyBeAccessedByLayers("cli", "sweep", "planner", "interop", "plan",
            "intraop", "model", "sharding", "cluster", "calibrate", "export", "deploy")
        .whereLayer("exec").mayOnlyBeAccessedByLayers("cli", "sweep", "planner", "interop")
        .whereLayer("framework").mayOnlyBeAccessedByLayers("cli", "plan", "export", "deploy",
            "calibrate")
        .check(CLASSES);
  }

  /**
   * Inside interop, the search (the package itself) sits on the HLO path, which sits on the layer
   * and stage costs and the stage DP, which both sit on the search space; nothing points up.
   */
  @Test
  void interopSubpackagesAreLayered() {
    layeredArchitecture().consideringOnlyDependenciesInLayers()
        .layer("search").definedBy("io.meshplan.interop")
        .layer("hlo").definedBy("io.meshplan.interop.hlo..")
        .layer("cost").definedBy("io.meshplan.interop.cost..")
        .layer("dp").definedBy("io.meshplan.interop.dp..")
        .layer("space").definedBy("io.meshplan.interop.space..")
        .whereLayer("search").mayNotBeAccessedByAnyLayer()
        .whereLayer("hlo").mayOnlyBeAccessedByLayers("search")
        .whereLayer("cost").mayOnlyBeAccessedByLayers("search", "hlo")
        .whereLayer("dp").mayOnlyBeAccessedByLayers("search", "hlo")
        .whereLayer("space").mayOnlyBeAccessedByLayers("search", "hlo", "cost", "dp")
        .check(CLASSES);
    slices().matching("io.meshplan.interop.(*)..").should().beFreeOfCycles().check(CLASSES);
  }

  /**
   * Pricing is chosen once, in {@code planner}: the command line parses flags and prints, and
   * never names a cost model, a kernel time model, a profile's prices, a layer cost or the
   * mesh environment a solve is priced in; it hands requests to the planner's entry points.
   */
  @Test
  void onlyThePlannerChoosesPricing() {
    PRICING_STAYS_IN_PLANNER.check(CLASSES);
  }

  /** The rule above fails on a command-line class that prices collectives itself. */
  @Test
  void thePricingRuleCatchesACommandThatPrices() {
    JavaClasses pricer = new ClassFileImporter().importClasses(
        io.meshplan.cli.PricingCommandFixture.class);
    org.assertj.core.api.Assertions.assertThatThrownBy(
        () -> PRICING_STAYS_IN_PLANNER.check(pricer))
        .isInstanceOf(AssertionError.class)
        .hasMessageContaining("io.meshplan.cluster.ClusterCommModels")
        .hasMessageContaining("io.meshplan.cluster.KernelTimeModel");
  }

  /**
   * The sweep plans each point through the planner's entry points ({@code Planner.plan}, {@code
   * Planner.megatronGrid}): it prices nothing itself and calls no search below the planner.
   */
  @Test
  void theSweepPlansThroughThePlanner() {
    noClasses().that().resideInAPackage("io.meshplan.sweep..")
        .should().dependOnClassesThat().areAssignableTo(io.meshplan.cluster.CommModel.class)
        .orShould().dependOnClassesThat().areAssignableTo(io.meshplan.cluster.ComputeModel.class)
        .orShould().dependOnClassesThat().belongToAnyOf(io.meshplan.cluster.KernelTimeModel.class,
            io.meshplan.interop.cost.IlpLayerCostModel.class,
            io.meshplan.interop.cost.LayerCostModel.class, io.meshplan.interop.InterOpPlanner.class,
            io.meshplan.interop.GridPlanner.class, io.meshplan.interop.RuntimePlanner.class)
        // Its results (PlanSimulator.Evaluated) may be read; the simulator is the planner's.
        .orShould().dependOnClassesThat().haveFullyQualifiedName(
            "io.meshplan.interop.PlanSimulator")
        .because("the sweep always plans through Planner (docs/ARCHITECTURE.md)")
        .check(CLASSES);
  }

  private static final com.tngtech.archunit.lang.ArchRule PRICING_STAYS_IN_PLANNER =
      noClasses().that().resideInAPackage("io.meshplan.cli..")
          .should().dependOnClassesThat().resideInAnyPackage("io.meshplan.interop.cost..")
          .orShould().dependOnClassesThat().areAssignableTo(io.meshplan.cluster.CommModel.class)
          .orShould().dependOnClassesThat().areAssignableTo(
              io.meshplan.cluster.ComputeModel.class)
          .orShould().dependOnClassesThat().areAssignableTo(
              io.meshplan.cluster.SendRecvModel.class)
          .orShould().dependOnClassesThat().belongToAnyOf(io.meshplan.cluster.CommPricing.class,
              io.meshplan.cluster.ClusterCommModels.class,
              io.meshplan.calibrate.ProfileCommModel.class, io.meshplan.intraop.MeshEnv.class,
              io.meshplan.intraop.AutoSharding.class,
              io.meshplan.interop.hlo.HloPipelinePlanner.class,
              io.meshplan.interop.hlo.HloLayerPricer.class,
              io.meshplan.interop.MegatronGrid.class, io.meshplan.interop.GridPlanner.class)
          .orShould().dependOnClassesThat().haveFullyQualifiedName(
              "io.meshplan.interop.PlanSimulator")
          .because("the command line never chooses pricing or assembles a cost model: "
              + "planner does (docs/ARCHITECTURE.md)");

  @Test
  void executorSeamDependsOnlyOnUtil() {
    noClasses().that().resideInAPackage("io.meshplan.exec..")
        .should().dependOnClassesThat().resideInAnyPackage("io.meshplan.cli..",
            "io.meshplan.sweep..", "io.meshplan.planner..", "io.meshplan.interop..", "io.meshplan.plan..",
            "io.meshplan.sim..", "io.meshplan.model..", "io.meshplan.cluster..",
            "io.meshplan.graph..", "io.meshplan.intraop..", "io.meshplan.sharding..",
            "io.meshplan.calibrate..", "io.meshplan.doctor..", "io.meshplan.export..",
            "io.meshplan.deploy..", "io.meshplan.report..")
        .check(CLASSES);
  }

  /**
   * Inside intraop: strategy generation and the cost graph (the top package) build the ILP and
   * call the solvers ({@code intraop.solve}), which read the ILP as plain data ({@code
   * intraop.ilp}); nothing points back up.
   */
  @Test
  void intraopSubPackagesPointDownwards() {
    layeredArchitecture().consideringOnlyDependenciesInLayers()
        .layer("intraop").definedBy("io.meshplan.intraop")
        .layer("intraop.solve").definedBy("io.meshplan.intraop.solve..")
        .layer("intraop.ilp").definedBy("io.meshplan.intraop.ilp..")
        .whereLayer("intraop").mayNotBeAccessedByAnyLayer()
        .whereLayer("intraop.solve").mayOnlyBeAccessedByLayers("intraop")
        .whereLayer("intraop.ilp").mayOnlyBeAccessedByLayers("intraop", "intraop.solve")
        .check(CLASSES);
  }

  @Test
  void theIlpDependsOnNeitherTheSolversNorTheCostGraph() {
    noClasses().that().resideInAPackage("io.meshplan.intraop.ilp..")
        .should().dependOnClassesThat().resideInAnyPackage("io.meshplan.intraop",
            "io.meshplan.intraop.solve..")
        .check(CLASSES);
  }

  @Test
  void theSolversDoNotDependOnTheCostGraph() {
    noClasses().that().resideInAPackage("io.meshplan.intraop.solve..")
        .should().dependOnClassesThat().resideInAPackage("io.meshplan.intraop")
        .check(CLASSES);
  }

  /**
   * The ILP is plain data that can be dumped and replayed: it knows nothing of graphs, meshes or
   * sharding, only the JDK, the shared checks and its JSON form.
   */
  @Test
  void theIlpIsPlainData() {
    classes().that().resideInAPackage("io.meshplan.intraop.ilp..")
        .should().onlyDependOnClassesThat().resideInAnyPackage("java..",
            "io.meshplan.intraop.ilp..", "io.meshplan.util..", "com.fasterxml.jackson..")
        .check(CLASSES);
  }

  /** The solvers take the ILP and nothing else of meshplan: no graph, mesh or sharding. */
  @Test
  void theSolversSeeOnlyTheIlp() {
    noClasses().that().resideInAPackage("io.meshplan.intraop.solve..")
        .should().dependOnClassesThat().resideInAnyPackage("io.meshplan.graph..",
            "io.meshplan.cluster..", "io.meshplan.sharding..", "io.meshplan.model..")
        .check(CLASSES);
  }

  @Test
  void packagesFormNoCycle() {
    slices().matching("io.meshplan.(*)..").should().beFreeOfCycles().check(CLASSES);
  }

  @Test
  void onlyTheCommandLinePrintsOrExits() {
    noClasses().that().resideOutsideOfPackage("io.meshplan.cli..")
        .should().accessField(System.class, "out")
        .orShould().accessField(System.class, "err")
        .orShould().callMethod(System.class, "exit", int.class)
        .check(CLASSES);
  }
}
