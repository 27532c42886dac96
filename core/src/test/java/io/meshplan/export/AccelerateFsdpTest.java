package io.meshplan.export;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.meshplan.cluster.ClusterSpec;
import io.meshplan.graph.DType;
import io.meshplan.model.ModelSpec;
import io.meshplan.model.Presets;
import io.meshplan.model.Recompute;
import io.meshplan.plan.ParallelConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * {@code export --to accelerate} writes a file Hugging Face Accelerate reads, by Accelerate's own
 * rules (huggingface/accelerate@16cb6eb), restated here: {@code config_args.py} refuses any
 * top-level key that is not a field of {@code BaseConfig} or {@code ClusterConfig} and needs
 * {@code distributed_type} and {@code num_processes}; {@code launch.py} takes each {@code
 * fsdp_config} key as its {@code --fsdp_*} argument; {@code utils/dataclasses.py} needs a boolean
 * {@code fsdp_reshard_after_forward} under {@code fsdp_version} 2 and an auto-wrap policy of
 * {@code utils/constants.py}'s {@code FSDP_AUTO_WRAP_POLICY}; {@code mixed_precision} is one of
 * {@code PrecisionType}'s values.
 */
class AccelerateFsdpTest {
  /** BaseConfig's and ClusterConfig's fields ({@code config_args.py}:76-81, 179-217). */
  private static final Set<String> CLUSTER_CONFIG_FIELDS = Set.of("compute_environment",
      "distributed_type", "mixed_precision", "use_cpu", "debug", "num_processes", "machine_rank",
      "num_machines", "gpu_ids", "main_process_ip", "main_process_port", "rdzv_backend",
      "same_network", "main_training_function", "enable_cpu_affinity", "fp8_config",
      "deepspeed_config", "fsdp_config", "parallelism_config", "megatron_lm_config",
      "mpirun_config", "downcast_bf16", "tpu_name", "tpu_zone", "tpu_use_cluster",
      "tpu_use_sudo", "command_file", "commands", "tpu_vm", "tpu_env", "dynamo_config");
  /** The launcher's FSDP arguments ({@code launch.py}, its {@code --fsdp_*} options). */
  private static final Set<String> LAUNCH_FSDP_ARGS = Set.of("fsdp_activation_checkpointing",
      "fsdp_auto_wrap_policy", "fsdp_backward_prefetch", "fsdp_cpu_ram_efficient_loading",
      "fsdp_forward_prefetch", "fsdp_min_num_params", "fsdp_offload_params",
      "fsdp_reshard_after_forward", "fsdp_sharding_strategy", "fsdp_state_dict_type",
      "fsdp_sync_module_states", "fsdp_transformer_layer_cls_to_wrap", "fsdp_use_orig_params",
      "fsdp_version");
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final ClusterSpec CLUSTER = ClusterSpec.parse("4x8:h100-80gb:ib-ndr400");

  /** Seeded data-parallel layouts: every file written is one Accelerate reads. */
  @Test
  void everyFileWrittenIsOneAccelerateReads() throws Exception {
    Random rnd = new Random(37);
    ModelSpec bf16 = Presets.get("llama2-7b").withTraining(1, DType.BF16);
    ModelSpec f16 = Presets.get("llama2-7b").withTraining(1, DType.F16);
    int written = 0;
    for (int i = 0; i < 40; i++) {
      int zero = 2 + rnd.nextInt(2);
      Recompute r = rnd.nextBoolean() ? Recompute.FULL : Recompute.NONE;
      int mb = 1 + rnd.nextInt(2);
      int steps = 1 + rnd.nextInt(8);
      ModelSpec m = rnd.nextBoolean() ? bf16 : f16;
      ExportInput in = new ExportInput(m, CLUSTER, new ParallelConfig(1, 1, 32, 1, mb,
          32 * mb * steps, r, false, zero));
      ExportResult res = new Exporter().export(ExportTarget.ACCELERATE, in);
      assertThat(res).isInstanceOf(ExportResult.Exported.class);
      String text = ((ExportResult.Exported) res).text();
      JsonNode y = YAML.readTree(text);
      List<String> keys = new ArrayList<>();
      y.fieldNames().forEachRemaining(keys::add);
      assertThat(CLUSTER_CONFIG_FIELDS).containsAll(keys);
      assertThat(y.get("distributed_type").asText()).isEqualTo("FSDP");
      // num_processes counts every process on every machine; -1 is refused at launch.
      assertThat(y.get("num_processes").asInt()).isEqualTo(32);
      assertThat(y.get("num_machines").asInt()).isEqualTo(4);
      JsonNode f = y.get("fsdp_config");
      f.fieldNames().forEachRemaining(k -> assertThat(LAUNCH_FSDP_ARGS).contains(k));
      assertThat(f.get("fsdp_version").asInt()).isEqualTo(2);
      assertThat(f.get("fsdp_reshard_after_forward").isBoolean()).isTrue();
      assertThat(f.get("fsdp_reshard_after_forward").asBoolean()).isEqualTo(zero == 3);
      assertThat(f.get("fsdp_activation_checkpointing").asBoolean())
          .isEqualTo(r == Recompute.FULL);
      assertThat(f.get("fsdp_auto_wrap_policy").asText())
          .isIn("TRANSFORMER_BASED_WRAP", "SIZE_BASED_WRAP", "NO_WRAP");
      assertThat(y.get("mixed_precision").asText()).isIn("no", "fp16", "bf16", "fp8")
          .isEqualTo(m.dtype() == DType.BF16 ? "bf16" : "fp16");
      // The batch is the script's: global = 32 GPUs x micro-batch x accumulation steps.
      assertThat(text).contains("gradient_accumulation_steps=" + steps + ")");
      written++;
    }
    assertThat(written).isEqualTo(40);
  }

  @Test
  void modelParallelismIsRefusedAndZeroOneHasAnFsdpNearest() {
    ModelSpec m = Presets.get("llama2-7b").withTraining(1, DType.BF16);
    ExportResult tp = new Exporter().export(ExportTarget.ACCELERATE, new ExportInput(m, CLUSTER,
        new ParallelConfig(2, 1, 16, 1, 1, 64, Recompute.FULL, false, 3)));
    assertThat(((ExportResult.NotExpressible) tp).missing())
        .startsWith("Accelerate's FSDP configuration shards over data-parallel GPUs only");
    assertThat(((ExportResult.NotExpressible) tp).nearest()).isEmpty();
    ExportResult z1 = new Exporter().export(ExportTarget.ACCELERATE, new ExportInput(m, CLUSTER,
        new ParallelConfig(1, 1, 32, 1, 1, 64, Recompute.SELECTIVE, false, 1)));
    ExportResult.NotExpressible n = (ExportResult.NotExpressible) z1;
    assertThat(n.missing()).contains("ZeRO stage 1 is not FSDP");
    assertThat(n.nearest().orElseThrow().config())
        .isEqualTo(new ParallelConfig(1, 1, 32, 1, 1, 64, Recompute.FULL, false, 2));
  }
}
