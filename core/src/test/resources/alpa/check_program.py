"""Loads a meshplan Alpa program against signature stand-ins of Alpa at b8078a9 and checks what
Alpa's stage construction asserts (alpa/pipeline_parallel/stage_construction.py,
cluster_layers_and_slice_mesh and get_sliced_virtual_submeshes), restated here in Python.

Usage: python3 check_program.py PROGRAM.py (with the stubs directory on PYTHONPATH).
Prints "ok" and exits 0, or exits 1 with the failed check.
"""
import dataclasses
import importlib.util
import sys

import alpa


def fail(why):
    print("FAILED: " + why)
    sys.exit(1)


def placement(shapes, hosts, per_host):
    """Places submeshes largest first, equal sizes later stage first; returns first GPUs."""
    order = sorted(range(len(shapes)), key=lambda i: (-(shapes[i][0] * shapes[i][1]), -i))
    host, dev, first = 0, 0, {}
    for i in order:
        n, m = shapes[i]
        if m == per_host:
            if dev != 0 or host + n > hosts:
                fail("stage %d (%dx%d) cannot take whole nodes" % (i, n, m))
            first[i] = host * per_host
            host += n
        else:
            if n != 1 or m >= per_host or dev + m > per_host:
                fail("stage %d (%dx%d) does not fit the node left" % (i, n, m))
            first[i] = host * per_host + dev
            dev += m
            if dev == per_host:
                host, dev = host + 1, 0
    if host != hosts or dev != 0:
        fail("the submeshes leave nodes unfilled")
    return first


def main(path):
    spec = importlib.util.spec_from_file_location("program", path)
    prog = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(prog)
    method_calls = len(alpa.CALLS)
    prog.parallel_method()
    name, args = alpa.CALLS[method_calls]
    assert name == "PipeshardParallel"
    stage = args["stage_option"]
    if not isinstance(stage, alpa.ManualStageOption):
        fail("the stage option is not a ManualStageOption")
    if args["layer_option"] != "manual":
        fail("layers are not marked by hand")
    if args["pipeline_schedule"] not in ("1f1b", "gpipe"):
        fail("unknown schedule " + args["pipeline_schedule"])
    if prog.GLOBAL_BATCH % args["num_micro_batches"] != 0:
        fail("the microbatches do not divide the batch")
    ids = stage.forward_stage_layer_ids
    shapes = stage.submesh_physical_shapes
    logical = stage.submesh_logical_shapes
    options = stage.submesh_autosharding_option_dicts
    if not (len(ids) == len(shapes) == len(logical) == len(options)):
        fail("stages, submeshes, logical shapes and option dicts differ in number")
    expected = 0
    for layer_ids in ids:
        for layer in layer_ids:
            if layer != expected:
                fail("layer id %d where %d was due" % (layer, expected))
            expected += 1
    if expected != prog.LAYERS:
        fail("%d layers in the stage option, %d marked" % (expected, prog.LAYERS))
    for i, (phys, log) in enumerate(zip(shapes, logical)):
        if log[0] * log[1] != phys[0] * phys[1]:
            fail("stage %d: logical %s does not multiply to the submesh %s" % (i, log, phys))
    if sum(n * m for n, m in shapes) != prog.NUM_NODES * prog.GPUS_PER_NODE:
        fail("the submeshes do not cover the cluster")
    placement(shapes, prog.NUM_NODES, prog.GPUS_PER_NODE)
    for d in options:
        dataclasses.replace(args["default_auto_sharding_option"], **d)
    if len(prog.LAYER_RECOMPUTE) != prog.LAYERS:
        fail("a recomputation per layer is missing")
    if not set(prog.LAYER_RECOMPUTE) <= {"none", "selective", "full"}:
        fail("unknown recomputation")
    print("ok")


main(sys.argv[1])
