package io.meshplan.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.meshplan.util.InputException;
import org.junit.jupiter.api.Test;

/**
 * NVLink domains larger than a host: GB200 and GB300 NVL72 racks of 18 compute trays of 4 GPUs,
 * planned and priced by domain.
 */
class RackScaleClusterTest {
  /**
   * Eight racks: 8 domains of 72 GPUs, 144 hosts of 4; each host's 4 GPUs have one 400 Gb/s NIC
   * each (ib-ndr400 offers 8 per host, at most one per GPU), so a domain sends 72 x 50 = 3,600
   * GB/s into the fabric. The same cluster named by hosts is the same cluster.
   */
  @Test
  void racksAreDomainsOfHosts() {
    ClusterSpec c = ClusterSpec.parse("8xnvl72:gb200");
    assertThat(c.nodes()).isEqualTo(8);
    assertThat(c.gpusPerNode()).isEqualTo(72);
    assertThat(c.hostGpus()).isEqualTo(4);
    assertThat(c.hosts()).isEqualTo(144);
    assertThat(c.gpuCount()).isEqualTo(576);
    assertThat(c.rackScale()).isTrue();
    assertThat(c.nicsInUse()).isEqualTo(72);
    assertThat(c.nodeNetworkBandwidth()).isCloseTo(3.6e12, within(1.0));
    assertThat(ClusterSpec.parse("144x4:gb200")).isEqualTo(c);
    assertThat(c.toShortString()).isEqualTo("8xnvl72:gb200:ib-ndr400");
    assertThat(ClusterSpec.parse(c.toShortString())).isEqualTo(c);
    // Racks run with 64 of their 72 GPUs (8 spares): domains of 64.
    ClusterSpec spared = ClusterSpec.parse("4xnvl64:gb300");
    assertThat(spared.gpuCount()).isEqualTo(256);
    assertThat(spared.hosts()).isEqualTo(64);
    assertThat(spared.fabric().name()).isEqualTo("ib-xdr800");
    // Fewer hosts than a rack: one domain of all of them.
    assertThat(ClusterSpec.parse("5x4:gb200").gpusPerNode()).isEqualTo(20);
    // A board whose NVLink stops at the host is a domain per host, as before.
    ClusterSpec h100 = ClusterSpec.parse("16x8:h100-80gb");
    assertThat(h100.rackScale()).isFalse();
    assertThat(h100.hosts()).isEqualTo(16);
    assertThat(h100.nicsInUse()).isEqualTo(8);
  }

  @Test
  void domainsThatCannotBeBuiltAreRefused() {
    String[][] bad = {
        // 20 hosts x 4 = 80 GPUs do not fill domains of 72.
        {"20x4:gb200", "do not fill whole NVLink domains of 72"},
        {"8x8:gb200", "a gb200 host holds 4 GPUs"},
        {"8xnvl72:h100-80gb", "h100-80gb's NVLink joins 8 GPUs of one host"},
        {"8xnvl70:gb200", "whole hosts of 4 and at most 72"},
        {"8xnvl76:gb200", "whole hosts of 4 and at most 72"},
        {"8xnvl0:gb200", "must be a positive integer"},
        // Counts too long for an int are past the GPU-count limit, and said so.
        {"4294967296x2:h100-nvl", "the node count 4294967296 is more than the limit of 1048576"},
        {"1xnvl99999999999:gb200", "the NVLink domain size 99999999999 is more than the limit"},
        {"1x00000000000000000000:h100", "must be a positive integer"}};
    for (String[] b : bad) {
      assertThatThrownBy(() -> ClusterSpec.parse(b[0])).as(b[0])
          .isInstanceOf(InputException.class).hasMessageContaining(b[1])
          .hasMessageNotContaining("\n");
    }
  }

  /**
   * An expert-parallel group of 64 inside a rack crosses no NIC: its all-to-all is NVLink's, 3 us
   * + (63/64) B / 721.8 GB/s (NCCL's 40.1 GB/s on each of a GB200's 18 NVLink 5 links, of their
   * 900 GB/s on the datasheet); across 8 racks of 8-GPU domains the same group spans 8 domains and
   * sends 7/8 of the buffer through a GPU's 50 GB/s share of the NICs.
   */
  @Test
  void groupsInsideARackStayOnNvlink() {
    LogicalMesh mesh = LogicalMesh.of(9, 64);
    ClusterSpec rack = ClusterSpec.parse("8xnvl72:gb200");
    CatalogCommModel in = new CatalogCommModel(rack, LogicalMesh.of(1, 64));
    assertThat(in.placement(1).nodesSpanned()).isEqualTo(1);
    double b = 1e9;
    assertThat(in.allToAll(b, 1)).isCloseTo(3e-6 + 63.0 / 64 * b / 721.8e9, within(1e-12));
    ClusterSpec boards = ClusterSpec.parse("72xnvl8:gb200");
    CatalogCommModel across = new CatalogCommModel(boards, LogicalMesh.of(1, 64));
    assertThat(across.placement(1).nodesSpanned()).isEqualTo(8);
    assertThat(across.allToAll(b, 1)).isGreaterThan(10 * in.allToAll(b, 1));
    assertThat(mesh.deviceCount()).isEqualTo(576);
  }

  /**
   * The canonical string, and the advice to plan on more nodes, name a cluster the parser reads
   * back as that cluster: four GB200 hosts are one NVLink domain of 16, and three such domains
   * are {@code 3xnvl16:gb200}, which {@code --cluster} takes, where {@code 3x16:gb200} is refused
   * (a GB200 host holds 4); three domains of one host each are {@code 3xnvl4:gb200}, where
   * {@code 3x4:gb200} would be one domain of 12. Seeded random clusters of every catalog GPU
   * round-trip the same way; past the largest cluster, 2^20 GPUs, the advice says so instead.
   */
  @Test
  void theAdviceToTryMoreNodesNamesAClusterTheParserReadsBack() {
    ClusterSpec four = ClusterSpec.parse("4x4:gb200");
    assertThat(four.tryAtLeast(3)).isEqualTo("try at least 3xnvl16:gb200:ib-ndr400");
    assertThatThrownBy(() -> ClusterSpec.parse("3x16:gb200")).isInstanceOf(InputException.class);
    ClusterSpec single = ClusterSpec.parse("3xnvl4:gb200");
    assertThat(single.gpusPerNode()).isEqualTo(4);
    assertThat(single.toShortString()).isEqualTo("3xnvl4:gb200:ib-ndr400");
    assertThat(ClusterSpec.parse("3x4:gb200").gpusPerNode()).isEqualTo(12);
    assertThat(ClusterSpec.parse("1x8:h100").tryAtLeast(10))
        .isEqualTo("try at least 10x8:h100-80gb:ib-ndr400");
    // 2^20 / 72 = 14,563.6 racks: 14,563 is the largest count of 72-GPU domains.
    ClusterSpec rack = ClusterSpec.parse("1xnvl72:gb200");
    assertThat(rack.tryAtLeast(14_563)).startsWith("try at least 14563xnvl72:gb200");
    assertThat(rack.tryAtLeast(14_564)).isEqualTo("it needs more than the 1048576 GPUs of the"
        + " largest cluster meshplan plans");
    assertThat(rack.tryAtLeast(Long.MAX_VALUE)).startsWith("it needs more than");
    java.util.Random rnd = new java.util.Random(20261130);
    HardwareCatalog catalog = HardwareCatalog.shipped();
    java.util.List<String> names = catalog.gpuNames();
    for (int i = 0; i < 300; i++) {
      GpuEntry g = catalog.gpu(names.get(rnd.nextInt(names.size()))).orElseThrow();
      int host = g.hostGpus();
      int most = g.spec().nvlinkDomain();
      // Domains of whole hosts on a rack-scale GPU (one host included), else nodes of 1, 2, 4
      // or 8 GPUs within the host's NVLink.
      String shape = most > host ? "nvl" + host * (1 + rnd.nextInt(most / host))
          : Integer.toString(Math.min(most, 1 << rnd.nextInt(4)));
      ClusterSpec c = ClusterSpec.parse((1 + rnd.nextInt(64)) + "x" + shape + ":"
          + g.spec().name());
      assertThat(ClusterSpec.parse(c.toShortString())).as(c.toShortString()).isEqualTo(c);
      long n = 1 + rnd.nextInt(4096);
      String advice = c.tryAtLeast(n);
      if (n * c.gpusPerNode() > io.meshplan.util.Checked.MAX_DEVICES) {
        assertThat(advice).startsWith("it needs more than");
        continue;
      }
      assertThat(advice).startsWith("try at least ");
      assertThat(ClusterSpec.parse(advice.substring("try at least ".length())))
          .as(advice).isEqualTo(c.withNodes((int) n));
    }
  }
}
