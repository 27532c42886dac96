"""A stand-in for Alpa at b8078a9 that keeps only the signatures meshplan's program calls.

Signatures restated from alpa-projects/alpa at b8078a9: PipeshardParallel.__init__
(alpa/parallel_method.py), ManualStageOption (alpa/pipeline_parallel/stage_construction.py),
AutoShardingOption (alpa/shard_parallel/auto_sharding.py). Nothing runs; calls are recorded.
"""
import dataclasses
from typing import Optional, Sequence

CALLS = []


@dataclasses.dataclass
class AutoShardingOption:
    enable_auto_sharding: bool = True
    allow_all_gather: bool = True
    allow_all_to_all: bool = True
    allow_replicated_parameters: bool = True
    force_data_parallel: bool = False
    force_batch_dim_to_mesh_dim: Optional[int] = None
    force_zero_stage_3: bool = False
    force_zero_stage_3_all_gather_threshold: int = 1 << 25
    prefer_reduce_scatter: bool = False
    allow_mixed_mesh_shape: bool = False
    allow_recompute_heavy_op: bool = False
    force_simple_heuristic: str = ""
    all_reduce_threshold: int = 1 << 60


@dataclasses.dataclass
class ManualStageOption:
    forward_stage_layer_ids: Sequence[Sequence[int]]
    submesh_physical_shapes: Sequence[Sequence[int]]
    submesh_logical_shapes: Sequence[Sequence[int]]
    submesh_autosharding_option_dicts: Sequence[dict]


class PipeshardParallel:
    def __init__(self, devices=None, num_micro_batches=1, default_auto_sharding_option=None,
                 pipeline_schedule="1f1b", layer_option=None, stage_option=None,
                 stage_input_shardings=None, manual_sharding_option=None):
        CALLS.append(("PipeshardParallel", dict(
            num_micro_batches=num_micro_batches,
            default_auto_sharding_option=default_auto_sharding_option,
            pipeline_schedule=pipeline_schedule, layer_option=layer_option,
            stage_option=stage_option)))


class CreateStateParallel:
    def __init__(self, train_step, other_args):
        pass


def init(cluster="ray", cluster_address=None, num_nodes=None, num_devices_per_node=None,
         namespace="alpa_default_space"):
    CALLS.append(("init", dict(cluster=cluster, num_nodes=num_nodes,
                               num_devices_per_node=num_devices_per_node)))


def mark_pipeline_boundary():
    pass


def grad(fun):
    return fun


def parallelize(fun=None, *, static_argnums="auto", donate_argnums="auto", batch_argnums=(1,),
                method=None):
    return fun


def shutdown():
    pass
