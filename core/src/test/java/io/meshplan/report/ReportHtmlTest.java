package io.meshplan.report;

import static io.meshplan.report.ReportFixtures.GIB;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.plan.PipelinePlan;
import io.meshplan.plan.PlanJson;
import io.meshplan.sim.Event;
import io.meshplan.sim.EventKind;
import io.meshplan.sim.SimulationResult;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPathConstants;
import javax.xml.xpath.XPathFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

class ReportHtmlTest {
  static Document parse(String html) throws Exception {
    DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
    f.setNamespaceAware(false);
    f.setFeature("http://apache.org/xml/features/nonvalidating/load-external-dtd", false);
    return f.newDocumentBuilder().parse(new ByteArrayInputStream(
        html.getBytes(StandardCharsets.UTF_8)));
  }

  static NodeList xpath(Document d, String expr) throws Exception {
    return (NodeList) XPathFactory.newInstance().newXPath().evaluate(expr, d,
        XPathConstants.NODESET);
  }

  @Test
  void pageIsWellFormedAndHasEverySection() throws Exception {
    Document d = parse(ReportHtml.write(ReportFixtures.input("gpt-1.7b", 8, false)));
    for (String id : new String[] {"headline", "cluster", "timeline", "memory", "breakdown",
        "sharding", "tip"}) {
      assertThat(xpath(d, "//*[@id='" + id + "']").getLength()).as(id).isEqualTo(1);
    }
    // 2 nodes x 8 GPUs; 4 stages of 4 GPUs use devices 0..15, so no GPU is unused.
    NodeList gpus = xpath(d, "//*[@id='cluster']//rect[@class='gpu']");
    assertThat(gpus.getLength()).isEqualTo(16);
    for (int i = 0; i < gpus.getLength(); i++) {
      // Device i belongs to stage i / 4 (submesh 1 x 4 starting at GPU 4s).
      assertThat(((Element) gpus.item(i)).getAttribute("data-stage"))
          .isEqualTo(Integer.toString(i / 4));
      assertThat(((Element) gpus.item(i)).getAttribute("fill"))
          .isEqualTo(Palette.stage(i / 4));
    }
  }

  @Test
  void memoryBarsAddUpToThePlanJsonPeaks() throws Exception {
    ReportInput in = ReportFixtures.input("gpt-1.7b", 8, false);
    PipelinePlan plan = PlanJson.read("plan.json", PlanJson.write(in.main().plan().get()));
    Document d = parse(ReportHtml.write(in));
    double scale = Double.parseDouble(((Element) xpath(d, "//*[@id='memory']").item(0))
        .getAttribute("data-scale"));
    for (int s = 0; s < plan.stages().size(); s++) {
      NodeList parts = xpath(d, "//*[@id='memory']/g[@data-group='" + s + "']/rect");
      assertThat(parts.getLength()).isEqualTo(5);
      double bytes = 0;
      double height = 0;
      for (int k = 0; k < parts.getLength(); k++) {
        Element r = (Element) parts.item(k);
        bytes += Double.parseDouble(r.getAttribute("data-bytes"));
        height += Double.parseDouble(r.getAttribute("height"));
      }
      double peak = plan.stages().get(s).peakMemoryBytes();
      // Five parts each printed to 0.1 byte.
      assertThat(bytes).isCloseTo(peak, within(1.0));
      // Heights are printed to 1e-4 px each.
      assertThat(height).isCloseTo(peak * scale, within(1e-3));
    }
    // Stage 3: weights 4 + gradients 4 + optimizer 24 + temporaries 0.25 GiB, plus activations
    // of the one microbatch in flight on the last 1F1B stage, 0.5 GiB: 32.75 GiB.
    assertThat(plan.stages().get(3).peakMemoryBytes() / GIB).isCloseTo(32.75, within(1e-9));
    double capacity = Double.parseDouble(((Element) xpath(d,
        "//*[@id='memory']/line[@class='capacity']").item(0)).getAttribute("data-bytes"));
    assertThat(capacity).isEqualTo(80 * GIB);
  }

  @Test
  void communicationBytesEqualTheSimulationJson() throws Exception {
    ReportInput in = ReportFixtures.input("gpt-1.7b", 8, false);
    Document d = parse(ReportHtml.write(in));
    com.fasterxml.jackson.databind.JsonNode json = new com.fasterxml.jackson.databind.ObjectMapper()
        .readTree(io.meshplan.sim.SimulationJson.write(in.main().simulation(), false));
    String[] axes = {"tensorParallel", "pipeline", "dataParallel"};
    for (int s = 0; s < ReportFixtures.STAGES; s++) {
      com.fasterxml.jackson.databind.JsonNode stage = json.get("stages").get(s)
          .get("communicationBytesPerGpu");
      for (String axis : axes) {
        NodeList cell = xpath(d, "//table[@class='commtable']/tr[@data-group='" + s
            + "']/td[@data-axis='" + axis + "']");
        assertThat(cell.getLength()).isEqualTo(1);
        assertThat(Double.parseDouble(((Element) cell.item(0)).getAttribute("data-bytes")))
            .as("stage %d %s", s, axis).isEqualTo(stage.get(axis).doubleValue());
      }
      // The fixture: 8 microbatches of 1 GiB tensor-parallel bytes, 2 GiB data-parallel per
      // iteration, per GPU.
      assertThat(stage.get("tensorParallel").doubleValue()).isEqualTo(8 * GIB);
      assertThat(stage.get("dataParallel").doubleValue()).isEqualTo(2 * GIB);
    }
    // Headline: the mean per GPU, 8.00 GiB tensor-parallel, 2.00 GiB data-parallel.
    assertThat(xpath(d, "//*[@id='headline']//td[contains(., 'tensor-parallel 8.00 GiB, "
        + "data-parallel 2.00 GiB')]").getLength()).isEqualTo(1);
  }

  @Test
  void timelineDrawsTheSimulatorsEvents() throws Exception {
    ReportInput in = ReportFixtures.input("gpt-1.7b", 8, false);
    SimulationResult sim = in.main().simulation();
    Document d = parse(ReportHtml.write(in));
    for (EventKind k : EventKind.values()) {
      long expected = sim.timeline().events().stream().filter(e -> e.kind() == k).count();
      String cls = "ev ev-" + k.name().toLowerCase(java.util.Locale.ROOT);
      assertThat(xpath(d, "//*[@id='timeline']/rect[@class='" + cls + "']").getLength())
          .as(k.name()).isEqualTo((int) expected);
    }
    // 4 stages x 8 microbatches x (forward + backward) = 64 compute events.
    assertThat(sim.timeline().events().stream().filter(Event::isCompute).count()).isEqualTo(64);
    assertThat(xpath(d, "//*[@id='timeline']/rect[@class='ev ev-aggregated']").getLength())
        .isZero();
  }

  @Test
  void longTimelinesAreSummarisedAndSaySo() throws Exception {
    int mb = 2000;
    ReportInput in = ReportFixtures.input("gpt-1.7b", mb, false);
    SimulationResult sim = in.main().simulation();
    int m = TimelineChart.detailedMicrobatches(sim.timeline(), mb);
    // m is the longest prefix of microbatches with at most MAX_DETAILED_EVENTS events.
    long within = sim.timeline().events().stream()
        .filter(e -> e.microbatch() >= 0 && e.microbatch() < m).count();
    long oneMore = sim.timeline().events().stream()
        .filter(e -> e.microbatch() >= 0 && e.microbatch() <= m).count();
    assertThat(within).isLessThanOrEqualTo(TimelineChart.MAX_DETAILED_EVENTS);
    assertThat(oneMore).isGreaterThan(TimelineChart.MAX_DETAILED_EVENTS);
    String html = ReportHtml.write(in);
    Document d = parse(html);
    // 4 stages x m microbatches drawn in detail.
    assertThat(xpath(d, "//*[@id='timeline']/rect[@class='ev ev-forward']").getLength())
        .isEqualTo(4 * m);
    assertThat(xpath(d, "//*[@id='timeline']/rect[@class='ev ev-aggregated']").getLength())
        .isEqualTo(4);
    assertThat(html).contains("Only microbatches 0-" + (m - 1) + " are drawn one by one")
        .contains("events of later microbatches are summarised");
    // Over 2000 x 4 x 2 = 16,000 compute events in the simulation; the page stays under 2 MB.
    assertThat(sim.timeline().events().size()).isGreaterThan(16_000);
    assertThat(html.length()).isLessThan(2_000_000);
  }

  @Test
  void userTextIsEscaped() throws Exception {
    String hostile = "<script>alert(1)</script>&\"'";
    String html = ReportHtml.write(ReportFixtures.input(hostile, 4, false));
    assertThat(html).doesNotContain("<script>alert").contains("&lt;script&gt;alert(1)");
    assertThat(html).contains("layer_0/feed_forward/w2 &lt;&amp;&quot;&#39;&gt;");
    Document d = parse(html);
    assertThat(d.getElementsByTagName("title").item(0).getTextContent()).contains(hostile);
  }

  @Test
  void outputIsDeterministicAndSelfContained() {
    String a = ReportHtml.write(ReportFixtures.input("gpt-1.7b", 8, true));
    String b = ReportHtml.write(ReportFixtures.input("gpt-1.7b", 8, true));
    assertThat(a).isEqualTo(b);
    // No external resource: the only URLs are the SVG namespace.
    assertThat(a.replace("http://www.w3.org/2000/svg", "")).doesNotContain("http:")
        .doesNotContain("https:").doesNotContain(" src=").doesNotContain(" href=");
  }

  @Test
  void compareDrawsBothPlansSideBySide() throws Exception {
    Document d = parse(ReportHtml.write(ReportFixtures.input("gpt-1.7b", 8, true)));
    for (String id : new String[] {"compare", "timeline", "b-timeline", "memory", "b-memory",
        "cluster", "b-cluster", "sharding", "b-sharding"}) {
      assertThat(xpath(d, "//*[@id='" + id + "']").getLength()).as(id).isEqualTo(1);
    }
    // The headline table has a column per plan.
    assertThat(xpath(d, "//*[@id='headline']//tr[1]/th").getLength()).isEqualTo(3);
    assertThat(xpath(d, "//*[@id='b-timeline']/rect[@class='ev ev-forward']").getLength())
        .isEqualTo(4 * 16);
  }

  @Test
  void aConfigurationWithoutPlanTakesGpusInDeviceOrder() throws Exception {
    SimulationResult sim = ReportFixtures.simulate(4);
    ReportInput in = new ReportInput(new ReportSide("no plan", Optional.empty(), sim),
        Optional.empty(), new ReportSide.Cluster(4, 8, 80 * GIB));
    Document d = parse(ReportHtml.write(in));
    NodeList gpus = xpath(d, "//*[@id='cluster']//rect[@class='gpu']");
    // 4 groups of 4 GPUs take devices 0..15; devices 16..31 are unused (-1).
    assertThat(gpus.getLength()).isEqualTo(32);
    assertThat(((Element) gpus.item(15)).getAttribute("data-stage")).isEqualTo("3");
    assertThat(((Element) gpus.item(16)).getAttribute("data-stage")).isEqualTo("-1");
    assertThat(xpath(d, "//*[@id='sharding']/p").item(0).getTextContent())
        .contains("No plan was given for this side");
  }
}
