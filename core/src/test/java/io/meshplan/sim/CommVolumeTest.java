package io.meshplan.sim;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Bytes per axis that the simulator reports. */
class CommVolumeTest {
  @Test
  void pipelineSendsEachActivationForwardAndItsGradientBack() {
    // 3 groups of 2 GPUs, 5 microbatches, stage k sends 1000 * (k + 1) bytes per GPU: group 0
    // sends 5 * 1000 activations; group 1 sends 5 * 2000 activations and 5 * 1000 gradients;
    // group 2 (last) sends 5 * 2000 gradients.
    List<StageCost> st = List.of(
        Stages.builder(1, 2).parallel(2, 1).send(1000).commBytes(
            new StageCommBytes(0, 0, 0, 40)).build(),
        Stages.builder(1, 2).parallel(2, 1).send(2000).build(),
        Stages.builder(1, 2).parallel(2, 1).send(3000).build());
    SimulationResult r = Stages.run(st, new Schedule.OneFOneB(), 5, P2pCost.free());
    assertThat(r.stages().get(0).commBytesPerGpu()).isEqualTo(new CommVolume(0, 40, 5000));
    assertThat(r.stages().get(1).commBytesPerGpu()).isEqualTo(new CommVolume(0, 0, 15000));
    assertThat(r.stages().get(2).commBytesPerGpu()).isEqualTo(new CommVolume(0, 0, 10000));
    // Totals over 2 GPUs per group: pp 2 * 30000, dp 2 * 40; mean over 6 GPUs.
    assertThat(r.commBytes()).isEqualTo(new CommVolume(0, 80, 60000));
    assertThat(r.commBytesPerGpu().pipelineBytes()).isEqualTo(10000.0);
  }

  @Test
  void interleavedChunksCountEveryHopBetweenGroupsAndPerMicrobatchWork() {
    // 2 groups, 2 chunks each (virtual stages 0,1,2,3 on groups 0,1,0,1), 4 microbatches, every
    // chunk sends 100 bytes, 10 tensor bytes per microbatch and 7 per iteration, 3 data-parallel
    // bytes per microbatch (ZeRO-3) and 1 per iteration.
    // Group 0 runs chunks 0 and 2: chunk 0 sends 4*100 forward; chunk 2 sends 4*100 forward and
    // 4*100 back to chunk 1: 1200. Group 1 runs 1 and 3: chunk 1 sends 4*100 forward and 4*100
    // back; chunk 3 (last) sends 4*100 back: 1200. Tensor: 2 chunks * (4*10 + 7) = 94; data:
    // 2 * (4*3 + 1) = 26.
    StageCost s = Stages.builder(1, 2).send(100)
        .commBytes(new StageCommBytes(10, 7, 3, 1)).build();
    SimulationResult r = Stages.run(Stages.repeat(s, 4), new Schedule.Interleaved(2), 4,
        P2pCost.free());
    assertThat(r.stages().get(0).commBytesPerGpu()).isEqualTo(new CommVolume(94, 26, 1200));
    assertThat(r.stages().get(1).commBytesPerGpu()).isEqualTo(new CommVolume(94, 26, 1200));
  }

  @Test
  void expertAndContextExchangesAreTheirOwnAxes() {
    // One stage of 2 GPUs, 4 microbatches: per microbatch 3 data-parallel bytes (ZeRO-3), 5 of
    // expert dispatch and combine and 6 of context exchange; 1 data-parallel byte per iteration.
    // dp = 4 * 3 + 1 = 13, ep = 4 * 5 = 20, cp = 4 * 6 = 24: the exchanges are not the
    // data-parallel axis's, where they were once counted (dp 4 * (3 + 5 + 6) + 1 = 57).
    StageCost s = Stages.builder(1, 2).commBytes(new StageCommBytes(0, 0, 3, 1, 5, 6)).build();
    SimulationResult r = Stages.run(List.of(s), new Schedule.OneFOneB(), 4, P2pCost.free());
    assertThat(r.stages().get(0).commBytesPerGpu()).isEqualTo(new CommVolume(0, 13, 0, 20, 24));
    assertThat(r.commBytesPerGpu().totalBytes()).isEqualTo(57.0);
    assertThat(SimulationText.exchanges(r.commBytesPerGpu())).isEqualTo(
        ", ep 0.00 GiB, cp 0.00 GiB");
  }

  @Test
  void oneGroupSendsNothingOnThePipeline() {
    // Interleaved chunks on one group pass activations inside the group: free, no bytes.
    StageCost s = Stages.builder(1, 2).send(100).build();
    SimulationResult r = Stages.run(Stages.repeat(s, 2), new Schedule.Interleaved(2), 2,
        P2pCost.free());
    assertThat(r.commBytes().pipelineBytes()).isZero();
  }
}
