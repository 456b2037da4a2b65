"""The throughput benchmark runs and counts FLOPs as its PyTorch reference does (the timings
themselves are printed, never asserted)."""

import ast
import dataclasses
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from dwlib.train import fast
from dwlib.train.model import PLAIN

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"


sys.path.insert(0, str(BENCH))  # as when a benchmark runs: its folder first, for the helpers it shares (common.py)


def _script(name: str):
    """benchmarks/<name>.py imported by path (the benchmarks are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench():
    return _script("train_throughput")


def _reference_flops_per_token():
    """torch_reference.flops_per_token, read from its source (torch need not be installed)."""
    tree = ast.parse((BENCH / "torch_reference.py").read_text())
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "flops_per_token")
    namespace = {}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), "torch_reference.py", "exec"), namespace)
    return namespace["flops_per_token"]


def test_flop_count_is_the_references(bench):
    reference = _reference_flops_per_token()
    for shape in [(1000, 256, 6, 256), (1000, 1024, 12, 768), (50, 16, 1, 32)]:
        assert bench.flops_per_token(*shape) == reference(*shape)
    assert bench.TORCH_REFERENCE == str(BENCH / "torch_reference.py")  # the repository's own copy


def test_the_benchmark_times_both_implementations_on_a_small_shape():
    out = subprocess.run([sys.executable, str(BENCH / "train_throughput.py"), "--no-torch", "--shapes", "1,32,2",
                          "--steps", "1", "--json"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout.strip().splitlines()[-1])
    assert (row["depth"], row["width"], row["heads"]) == (1, 32, 2)
    assert row["fast_step_ms"] > 0 and row["plain_step_ms"] > 0


def test_attention_check_compares_the_fast_path_with_float32(bench):
    err = bench.fused_attention_error(batch=1, seq=32, heads=2, head_size=16)
    assert 0 < err < 2e-2  # bfloat16 rounding of the outputs (on a CPU, dwlib's own attention)


def test_torch_alone_without_a_reference_says_so(bench, capsys, refused):
    status = bench.main(["--torch-alone", "--torch-reference", "/nonexistent/torch_reference.py"])
    printed = capsys.readouterr()
    refused(status, printed.err, "/nonexistent/torch_reference.py", printed.out)


def test_the_group_benchmark_times_both_ways_of_training_runs(refused):
    out = subprocess.run([sys.executable, str(BENCH / "group_throughput.py"), "--shape", "1,32,2", "--runs", "2",
                          "--chunk", "1", "--steps", "1", "--seq", "32", "--batch", "4", "--json"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout.strip().splitlines()[-1])
    assert row["runs"] == 2 and row["one_by_one_tok_s"] > 0 and row["together_tok_s"] > 0
    bad = subprocess.run([sys.executable, str(BENCH / "group_throughput.py"), "--steps", "3", "--chunk", "2"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)
    refused(bad.returncode, bad.stderr, "multiple of --chunk", bad.stdout)


@pytest.mark.slow  # two groups compiled, and one single run: about 15 s on 2 idle cores
def test_the_group_benchmark_measures_a_presets_sweep_average_against_one_run():
    out = subprocess.run([sys.executable, str(BENCH / "group_throughput.py"), "--preset", "mini-lr", "--runs", "2",
                          "--chunk", "1", "--steps", "2", "--json"], capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    row = json.loads(out.stdout.strip().splitlines()[-1])
    assert [g["shape"] for g in row["groups"]] == [[2, 88, 11], [8, 48, 6]] and row["runs_per_group"] == 2
    assert row["single_run_shape"] == [8, 48, 6] and row["sweep_gflop_s"] > 0 and row["single_run_gflop_s"] > 0
    # the ratio is printed to 3 decimals and the rates to 2: on a loaded machine (a ratio of 0.033) rounding alone moves it by 2%
    assert row["sweep_over_single"] == pytest.approx(row["sweep_gflop_s"] / row["single_run_gflop_s"], rel=0.02,
                                                     abs=2e-3)


@pytest.fixture(scope="module")
def floor():
    return _script("product_floor")


def test_the_products_floor_counts_the_steps_products_and_nothing_else(floor):
    from dwlib.core.sizes import training_flops_per_token

    for depth, width, vocab, seq in [(6, 256, 1000, 256), (6, 512, 1000, 256), (2, 128, 1000, 256), (3, 48, 50, 16)]:
        attention = 12 * depth * seq * width  # the score and value products, left out of the floor
        tokens = 16 * seq
        assert floor.product_flops(depth, width, vocab, tokens) == tokens * (
            training_flops_per_token(depth, width, vocab, seq) - attention)


@pytest.mark.parametrize("depth", [1, 2])
def test_the_products_floor_keeps_every_product_xla_could_drop(floor, depth):
    # forward, input gradient and weight gradient of 4 linear layers a block and of the unembedding;
    # an output left unused would let XLA drop its product (the forward ones, in an earlier draft)
    hlo = floor.dwlib_products(depth, 32, 50, 8, 4, compiled=True)
    assert len(re.findall(r"= \S+ dot\(", hlo)) == 3 * (4 * depth + 1)


@pytest.mark.parametrize("args, named", [(["--shapes", "1,32"], "--shapes 1,32"), (["--shapes", "2,30,4"], "2,30,4"),
                                         (["--shapes", "a,b,c"], "a,b,c"), (["--steps", "0"], "--steps 0")])
def test_the_products_floor_refuses_bad_input(floor, capsys, refused, args, named):
    status = floor.main(args)
    printed = capsys.readouterr()
    refused(status, printed.err, named, printed.out)


def test_the_ablation_takes_out_each_fast_operation_once():
    """benchmarks/ops_ablation.py times the fast step against it with one operation made plain:
    one variant per operation in which the fast path differs from the plain model, each differing
    from the fast ones in that one."""
    variants = _script("ops_ablation").variants()
    every = [f.name for f in dataclasses.fields(fast.OPS)]
    fields = [f for f in every if getattr(fast.OPS, f) is not getattr(PLAIN, f)]
    assert fields and len(fields) < len(every)  # the fast path replaces some operations, not all
    assert list(variants) == ["all fast"] + [f"plain {f}" for f in fields]
    for f in fields:
        ops = variants[f"plain {f}"]
        assert getattr(ops, f) is getattr(PLAIN, f) and getattr(fast.OPS, f) is not getattr(PLAIN, f)
        assert all(getattr(ops, g) is getattr(fast.OPS, g) for g in every if g != f)


def test_the_ablation_refuses_a_bad_shape(refused):
    proc = subprocess.run([sys.executable, str(BENCH / "ops_ablation.py"), "--shapes", "2,30,4"],
                          capture_output=True, text=True, timeout=120)
    refused(proc.returncode, proc.stderr, "heads dividing width", proc.stdout)


def test_the_gpu_comparison_sorts_kernels_by_what_they_do():
    """benchmarks/gpu_compare.py's profile summary: kernel names as the H100 profiles printed
    them, each under its kind, and the step's share with no kernel running."""
    gc = _script("gpu_compare")
    names = {"nvjet_sm90_tst_128x160_64x5_2x1_v_bz_TNT": "matmul", "gemm_fusion_dot_390": "matmul",
             "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x64": "attention",
             "void cudnn::fusion::compute_dot_do_o_specialized<true, 64>(void const*)": "attention",
             "loop_multiply_fusion_11": "other", "input_convert_reduce_fusion": "other", "MemcpyD2D": "copy"}
    assert {n: gc.kind_of(n) for n in names} == names
    summary = gc.summarise({"gemm_a": 0.06, "loop_add_fusion": 0.03, "op:fusion.1": 0.5}, steps=3, step_s=0.04)
    assert summary["kernel_ms"] == 30.0 and summary["idle_share"] == 0.25  # 30 of 40 ms busy; XLA ops apart
    assert summary["by_kind_ms"] == {"matmul": 20.0, "other": 10.0}
    assert summary["top_xla_ops_ms"] == [["fusion.1", 166.667]]
    full, causal = gc.flop_counts(12, 768, 1024)
    assert full == 627_462_144 and full - causal == 6 * 12 * 1024 * 768  # the causal half of the attention products


def test_the_gpu_comparison_refuses_a_cpu_and_bad_input(refused):
    for args, named in ((["--rounds", "0"], "positive"), ([], "no GPU")):
        proc = subprocess.run([sys.executable, str(BENCH / "gpu_compare.py"), *args],
                              capture_output=True, text=True, timeout=120, cwd=BENCH)
        refused(proc.returncode, proc.stderr, named, proc.stdout)
